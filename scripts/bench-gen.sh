#!/usr/bin/env bash
# Benchmarks `lossless gen` against `tcpreplay --topspeed` sending the same PFC frames on the
# same veth pair, side by side in one run, with the sender pinned to CPU 0. Needs root.
#   scripts/bench-gen.sh [FRAMES] [ROUNDS]     (default 2000000 frames per run, 3 rounds)
#
# Two veth configurations are measured, each with every tool, interleaved round by round:
#   default  the veth as `ip link add` makes it. veth_xmit hands each frame to netif_rx and the
#            receive softirq runs on the SENDING cpu, so the sender's core pays for the
#            receiver's stack too.
#   napi     GRO on the receiving end v1 (veth then queues frames on a ptr_ring polled by NAPI),
#            threaded NAPI on v1 (the poll runs in a kthread the scheduler puts on the other
#            cpu) and TSO off on v0 (veth only uses the NAPI ring for skbs it may aggregate,
#            and with TSO on that excludes TX-ring frames). The sender's core then pays only
#            for building the skb and veth_xmit; this is the "from one core" measurement.
# Every run reads the receiving end's rx_packets counter before and after: "received" is the
# frames that crossed the veth (a frame the device refused and the tool did not resend is
# missing there), and v0's tx_dropped shows how often the device refused one (both tools
# resend on ENOBUFS). The rate of a run is the tool's own (frames sent / its elapsed time).
set -euo pipefail
N=${1:-2000000}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "bench-gen.sh needs root (network namespaces, raw sockets)" >&2; exit 2; fi
for t in tcpreplay tcpdump ethtool; do
  command -v $t >/dev/null 2>&1 && continue
  echo "== installing $t"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $t >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $t >/dev/null; }
done
cargo build --release -q -p lossless-cli
BIN=$PWD/target/release/lossless
A=llbench$$a; B=llbench$$b; DIR=$(mktemp -d)
cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
ip netns add "$A"; ip netns add "$B"
ip link add lb$$ type veth peer name v1 netns "$B"
ip link set lb$$ netns "$A" name v0
# Nothing but the benchmark's frames crosses the link (no IPv6 router solicitations, MLD).
ip netns exec "$A" sysctl -qw net.ipv6.conf.v0.disable_ipv6=1
ip netns exec "$B" sysctl -qw net.ipv6.conf.v1.disable_ipv6=1
ip -n "$A" link set v0 up; ip -n "$B" link set v1 up

# The frames: 1000 of gen's, captured on the far end, for tcpreplay to loop over.
ip netns exec "$B" timeout 20 tcpdump -q -n -U --immediate-mode -s 256 -B 16384 -i v1 -c 1000 -w "$DIR/pfc.pcap" ether proto 0x8808 2>"$DIR/td.log" &
TD=$!
for _ in $(seq 100); do grep -q "listening on" "$DIR/td.log" 2>/dev/null && break; sleep 0.1; done
ip netns exec "$A" "$BIN" gen -i v0 -p 255 -t 65535 -n 3000 -r 10000 >/dev/null
wait "$TD" || { echo "tcpdump did not capture 1000 of gen's frames: $(cat "$DIR/td.log")" >&2; exit 1; }

GEN="$BIN gen -i v0 -p 255 -t 65535 -n $N --json"
REPLAY="tcpreplay -i v0 --topspeed --preload-pcap --loop=$((N / 1000)) $DIR/pfc.pcap"
rx() { ip netns exec "$B" cat /sys/class/net/v1/statistics/rx_packets; }
txdrop() { ip netns exec "$A" cat /sys/class/net/v0/statistics/tx_dropped; }

# run CONFIG TOOL CMD...: one run on cpu 0; appends "config tool rate received refused" to results.
run() {
  local cfg=$1 tool=$2; shift 2
  local r0 d0 out rate
  r0=$(rx); d0=$(txdrop)
  out=$(ip netns exec "$A" taskset -c 0 "$@" 2>&1)
  rate=$(printf '%s' "$out" | python3 -c 'import json,re,sys
s=sys.stdin.read()
try: print(round(json.loads(s)["rate_fps"]))
except ValueError:
    m=re.search(r"Rated: .* ([0-9.]+) pps", s); print(round(float(m.group(1))) if m else 0)')
  local got=$(( $(rx) - r0 )) refused=$(( $(txdrop) - d0 ))
  printf '   %-8s %-18s %9s frames/s  received %s of %s, refused by the device %s\n' \
    "$cfg" "$tool" "$rate" "$got" "$N" "$refused"
  echo "$cfg $tool $rate $got $refused" >>"$DIR/results"
}

configure() {
  if [ "$1" = napi ]; then
    ip netns exec "$B" ethtool -K v1 gro on >/dev/null
    ip netns exec "$B" sh -c 'echo 1 > /sys/class/net/v1/threaded'
    ip netns exec "$A" ethtool -K v0 tso off >/dev/null
  fi
}

echo "== lossless gen (TX ring):  $GEN"
echo "== lossless gen --sendmmsg: $GEN --sendmmsg"
echo "== tcpreplay:               $REPLAY"
echo "== $N frames per run, $ROUNDS rounds, sender pinned to cpu 0 ($(nproc) cpus; load now: $(cut -d' ' -f1-3 /proc/loadavg))"
for cfg in default napi; do
  configure $cfg
  echo "== veth config: $cfg (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  for r in $(seq "$ROUNDS"); do
    run $cfg "gen" $GEN
    run $cfg "gen --sendmmsg" $GEN --sendmmsg
    run $cfg "tcpreplay" $REPLAY
  done
done
python3 - "$DIR/results" "$N" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
n = int(sys.argv[2])
def runs(cfg, tool):
    return [r for r in rows if r[0] == cfg and " ".join(r[1:-3]) == tool]
lost = [r for r in rows if int(r[-2]) != n]
for cfg in ("default", "napi"):
    print(f"== {cfg}: best / median frames/s")
    stats = {}
    for tool in ("gen", "gen --sendmmsg", "tcpreplay"):
        rates = [int(r[-3]) for r in runs(cfg, tool)]
        stats[tool] = (max(rates), statistics.median(rates))
        print(f"   {tool:16s} {max(rates):9.0f} / {statistics.median(rates):9.0f}")
    g, t = stats["gen"], stats["tcpreplay"]
    print(f"   ratio gen / tcpreplay: best {g[0] / t[0]:.2f}, median {g[1] / t[1]:.2f}")
if lost:
    print("== WARNING: runs whose frames did not all arrive:", *[" ".join(r) for r in lost], sep="\n   ")
EOF
