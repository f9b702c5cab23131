#!/usr/bin/env bash
# Benchmarks `lossless gen` against `tcpreplay --topspeed` sending the same PFC frames on the same
# veth pair (network namespaces, one sender core). Needs root. Usage:
#   scripts/bench-gen.sh [FRAMES]        (default 2000000 frames per tool)
# Prints frames/s of each tool and the ratio gen / tcpreplay.
set -euo pipefail
N=${1:-2000000}
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then echo "bench-gen.sh needs root (network namespaces, raw sockets)" >&2; exit 2; fi
if ! command -v tcpreplay >/dev/null 2>&1; then
  echo "== installing tcpreplay"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tcpreplay >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tcpreplay >/dev/null; }
fi
cargo build --release -q -p lossless-cli
BIN=$PWD/target/release/lossless
A=llbench$$a; B=llbench$$b; DIR=$(mktemp -d)
cleanup() { ip netns del "$A" 2>/dev/null || true; ip netns del "$B" 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
ip netns add "$A"; ip netns add "$B"
ip link add lb$$ type veth peer name v1 netns "$B"
ip link set lb$$ netns "$A" name v0
ip -n "$A" link set v0 up; ip -n "$B" link set v1 up

# The frames: 1000 of gen's, captured on the far end, for tcpreplay to loop over.
ip netns exec "$B" timeout 20 tcpdump -q -n -U --immediate-mode -s 256 -B 16384 -i v1 -c 1000 -w "$DIR/pfc.pcap" ether proto 0x8808 2>"$DIR/td.log" &
TD=$!
for _ in $(seq 100); do grep -q "listening on" "$DIR/td.log" 2>/dev/null && break; sleep 0.1; done
ip netns exec "$A" "$BIN" gen -i v0 -p 255 -t 65535 -n 3000 -r 10000 >/dev/null
wait "$TD" || { echo "tcpdump did not capture 1000 of gen's frames: $(cat "$DIR/td.log")" >&2; exit 1; }

GEN_CMD="$BIN gen -i v0 -p 255 -t 65535 -n $N --json"
REPLAY_CMD="tcpreplay -i v0 --topspeed --preload-pcap --loop=$((N / 1000)) $DIR/pfc.pcap"
echo "== lossless gen:  $GEN_CMD"
GEN=$(ip netns exec "$A" taskset -c 0 $GEN_CMD | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["rate_fps"]))')
echo "   $GEN frames/s"
echo "== lossless gen --tx-ring (PACKET_MMAP ring instead of sendmmsg)"
RING=$(ip netns exec "$A" taskset -c 0 $GEN_CMD --tx-ring | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["rate_fps"]))')
echo "   $RING frames/s"
echo "== tcpreplay:     $REPLAY_CMD"
REPLAY=$(ip netns exec "$A" taskset -c 0 $REPLAY_CMD 2>&1 | sed -n 's/.*Rated: .* Bps, .* Mbps, \([0-9.]*\) pps.*/\1/p' | head -1)
echo "   $REPLAY frames/s"
python3 -c "print(f'== ratio gen / tcpreplay: {$GEN / $REPLAY:.2f}')"
