#!/usr/bin/env bash
# Issue 22's scale figures: k-ary fat trees (k^3/4 hosts at 100 Gb/s, 1 us links, 32 MB shared
# buffers) under the corpus's WebSearch workload, one thread, release build, each run timed by
# /usr/bin/time -v. Per fat tree size and transport it runs
#   - the build alone (the run lasts 1 ns): what the fabric itself costs in memory and time,
#   - each duration of DURATIONS (arrivals all along): what the flows add,
# prints one table row per run (flows and events from the run's JSON, wall and user time, peak
# RSS, events per second of wall time) and fits peak RSS = a + b·hosts + c·flows over the rows
# (least squares) with the largest relative error of the fit, so that a size that is not linear
# shows as a bad fit. docs/benchmarks.md ("Scale: up to 8,192 hosts") keeps the figures.
#
#   scripts/bench-scale.sh [K ...]          default: 8 16 (k = 24: 3,456 hosts, 32: 8,192)
#   TRANSPORT=plain|dcqcn|both  plain flows (default), RoCEv2 QPs under DCQCN with ECN (the
#                               320-host benchmark's traffic), or both
#   DURATIONS="1ms"             simulated times to run, e.g. "0.5ms 1ms 2ms"
#   LOAD=0.3                    the workload's offered load
#   LOSSLESS=target/release/lossless   the binary (built here when left to the default)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
corpus=${LOSSLESS_CORPUS:-$(cd .. && pwd)/shared/corpus}
cdf=$corpus/workloads/WebSearch_distribution.txt
[ -f "$cdf" ] || { echo "no WebSearch CDF at $cdf (set LOSSLESS_CORPUS)" >&2; exit 2; }
if [ $# -gt 0 ]; then ks=("$@"); else ks=(8 16); fi
transport=${TRANSPORT:-plain}
durations=${DURATIONS:-1ms}
load=${LOAD:-0.3}
if [ -z "${LOSSLESS:-}" ]; then
  cargo build --release --locked -q -p lossless-cli
  LOSSLESS=$root/target/release/lossless
fi
case $transport in
  plain) transports=(plain) ;;
  dcqcn) transports=(dcqcn) ;;
  both) transports=(plain dcqcn) ;;
  *) echo "TRANSPORT must be plain, dcqcn or both, not $transport" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scenario() { # K TRANSPORT
  cat <<TOML
name = "scale-k$1-$2"
seed = 1
duration = "1ms"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
TOML
  if [ "$2" = dcqcn ]; then
    cat <<TOML
[qp]
cc = "dcqcn"
preset = "hpcc-ns3"
dcqcn = { cnp_mode = "packet", min_time_between_cnps = "4us", cnp_802p_prio = 6 }
rocev2 = { preset = "perftest" }
[ecn]
preset = "hpcc-ns3"
priorities = [3]
TOML
  fi
  cat <<TOML
[fabric]
kind = "fat-tree"
k = $1
host_rate = "100G"
delay = "1us"
[fabric.switch]
buffer_bytes = 33554432
alpha = 0.125
[[workload]]
name = "websearch"
src = ["h*"]
dst = ["h*"]
priority = 3
cdf_file = "$cdf"
load = $load
TOML
  [ "$2" = dcqcn ] && echo 'transport = "rocev2"'
  return 0
}

rows=$work/rows
echo "machine: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| k | hosts | switches | traffic | simulated | flows | events | wall s | user s | peak RSS KB | events/s (wall) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for k in "${ks[@]}"; do
  for t in "${transports[@]}"; do
    scenario "$k" "$t" >"$work/k$k-$t.toml"
    for d in 1ns $durations; do
      /usr/bin/time -v "$LOSSLESS" sim "$work/k$k-$t.toml" --duration "$d" -q --no-twin --threads 1 \
        --json "$work/out.json" 2>"$work/time.txt" >/dev/null
      python3 - "$work/out.json" "$work/time.txt" "$k" "$t" "$d" "$rows" <<'EOF'
import json, sys
out, tv, k, t, d, rows = sys.argv[1:]
r = json.load(open(out))
tm = {}
for line in open(tv):
    if ":" in line:
        key, _, val = line.strip().rpartition(": ")
        tm[key] = val
def secs(s):
    parts = [float(x) for x in s.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
wall = secs(tm["Elapsed (wall clock) time (h:mm:ss or m:ss)"])
user = float(tm["User time (seconds)"])
rss = int(tm["Maximum resident set size (kbytes)"])
hosts, switches, flows, events = len(r["hosts"]), len(r["switches"]), len(r["flows"]), r["events"]
label = "build only" if d == "1ns" else d
print(f"| {k} | {hosts:,} | {switches:,} | {t} | {label} | {flows:,} | {events:,} | {wall:.2f} | "
      f"{user:.2f} | {rss:,} | {events / wall / 1e6 if wall > 0 else 0:.2f} M |")
with open(rows, "a") as f:
    print(k, t, d, hosts, switches, flows, events, wall, user, rss, file=f)
EOF
    done
  done
done
python3 - "$rows" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
for t in sorted({r[1] for r in rows}):
    pts = [(float(r[3]), float(r[5]), float(r[9])) for r in rows if r[1] == t]
    if len({p[0] for p in pts}) < 2 or len(pts) < 3:
        print(f"{t}: too few sizes to fit")
        continue
    # least squares for rss = a + b·hosts + c·flows (normal equations, 3×3)
    X = [(1.0, h, f) for h, f, _ in pts]
    y = [r for _, _, r in pts]
    A = [[sum(x[i] * x[j] for x in X) for j in range(3)] for i in range(3)]
    v = [sum(x[i] * yy for x, yy in zip(X, y)) for i in range(3)]
    for i in range(3):  # Gauss-Jordan
        p = max(range(i, 3), key=lambda r: abs(A[r][i]))
        A[i], A[p], v[i], v[p] = A[p], A[i], v[p], v[i]
        if abs(A[i][i]) < 1e-9:
            break
        for r in range(3):
            if r != i:
                m = A[r][i] / A[i][i]
                A[r] = [a - m * b for a, b in zip(A[r], A[i])]
                v[r] -= m * v[i]
    else:
        a, b, c = (v[i] / A[i][i] for i in range(3))
        worst = max(abs(a + b * h + c * f - r) / r for h, f, r in pts)
        print(f"{t}: peak RSS ≈ {a / 1024:.1f} MB + {b * 1.024:.2f} kB per host + {c * 1.024:.2f} kB "
              f"per flow (fit over {len(pts)} runs, largest error {100 * worst:.1f} %)")
        continue
    print(f"{t}: flows and hosts not separable with these runs (add DURATIONS)")
EOF
