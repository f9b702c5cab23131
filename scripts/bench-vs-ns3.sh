#!/usr/bin/env bash
# Side by side, in one run: the HPCC ns-3 fork (alibaba-edu/High-Precision-Congestion-Control,
# folder simulation/, built as ../shared/corpus/hpcc-ns3/README.md says) and `lossless sim --ns3`
# on the same experiment inputs, one after the other on this machine. For each experiment it
# prints wall time, user CPU and peak RSS of both, the ratios, and the FCT slowdown p50/p95/p99
# each one's fct.txt gives.
#
#   scripts/bench-vs-ns3.sh [NS3_SIMULATION_DIR] [EXPERIMENT ...]
#
# NS3_SIMULATION_DIR is the fork's simulation/ folder holding build/scratch/third (nothing of the
# fork is vendored here). Without it, or when the binary is missing, the fork's side is SKIPPED
# (said loudly) and lossless is compared with the times recorded in the corpus (time.txt, the
# fork's run on this machine type). EXPERIMENT names folders of the corpus's hpcc-ns3/
# (default: incast-8 ft-k4-websearch), or `fat-tree-320`: the corpus's 320-host fat tree
# (workloads/fat-tree-320.topology.txt, 400G fabric) with 2 ms of WebSearch arrivals at 30 % load
# (flow.txt drawn here as the fork's traffic generator draws it: per host, exponential
# inter-arrival times at the load, a uniformly random other host, sizes interpolated in the CDF;
# seed 1) and ft-k4-websearch's DCQCN config. The fork has no recorded run of it in the corpus;
# issue 13 recorded about 100 s and 341 MB on this machine type, which the table shows as
# "issue 13" when the fork is not given. The corpus is $LOSSLESS_CORPUS or ../shared/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

ns3=${1:-}
[ $# -gt 0 ] && shift
experiments=("$@")
[ ${#experiments[@]} -eq 0 ] && experiments=(incast-8 ft-k4-websearch)
corpus=${LOSSLESS_CORPUS:-$(cd .. && pwd)/shared/corpus}
[ -d "$corpus/hpcc-ns3" ] || { echo "error: $corpus/hpcc-ns3 not found (set LOSSLESS_CORPUS)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "error: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

fork=""
if [ -n "$ns3" ] && [ -x "$ns3/build/scratch/third" ]; then
  fork=$(cd "$ns3" && pwd)
else
  echo "!!!!!!!! SKIPPED the fork's side: ${ns3:-no NS3_SIMULATION_DIR given}${ns3:+ has no build/scratch/third}."
  echo "!!!!!!!! lossless is compared with the fork's times recorded in the corpus instead."
fi

cargo build --release --locked -q -p lossless-cli
bin=$PWD/target/release/lossless
work=$(mktemp -d "${TMPDIR:-/tmp}/lossless-bench-ns3-XXXXXX")
trap 'rm -rf "$work"' EXIT

# "wall_s user_s rss_kb" from a /usr/bin/time -v log
times_of() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i] }
              /User time/ { u = $2 } /Maximum resident/ { r = $2 }
              END { printf "%s %s %s\n", w, u, r }' "$1"
}

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# "p50 p95 p99" of FCT / standalone FCT over a fct.txt (nearest rank, as the tests compute it)
slowdowns() {
  awk '{ print $7 / $8 }' "$1" | sort -g | awk '{ v[NR] = $1 }
    function q(p,  i) { i = int(p * NR); if (i < p * NR) i++; if (i < 1) i = 1; return v[i] }
    END { if (NR == 0) print "- - -"; else printf "%.3f %.3f %.3f\n", q(0.50), q(0.95), q(0.99) }'
}

printf '%-16s %-9s %9s %9s %10s %8s %8s %8s\n' experiment simulator "wall s" "user s" "peak MB" p50 p95 p99
# the fat-tree-320 experiment's inputs in $1: topology.txt, flow.txt, config.txt
make_fat_tree_320() {
  local d=$1 wl=$corpus/workloads
  mkdir -p "$d"
  cp "$wl/fat-tree-320.topology.txt" "$d/topology.txt"
  cp "$corpus/hpcc-ns3/ft-k4-websearch/trace_nodes.txt" "$d/trace_nodes.txt"
  python3 - "$wl/WebSearch_distribution.txt" "$d/flow.txt" <<'PY'
import bisect, math, random, sys
cdf_path, out_path = sys.argv[1], sys.argv[2]
hosts, load, host_bps, duration_s, base_s = 320, 0.3, 100e9, 0.002, 2.0
points = [tuple(map(float, l.split())) for l in open(cdf_path) if l.strip()]
sizes, percents = [p[0] for p in points], [p[1] for p in points]
mean = sum((sizes[i] + sizes[i - 1]) / 2 * (percents[i] - percents[i - 1]) / 100
           for i in range(1, len(points)))
rng = random.Random(1)
def size():
    u = rng.random() * 100
    i = max(1, bisect.bisect_left(percents, u))
    lo, hi = points[i - 1], points[i]
    f = 0 if hi[1] == lo[1] else (u - lo[1]) / (hi[1] - lo[1])
    return max(1, int(lo[0] + f * (hi[0] - lo[0])))
gap = mean * 8 / (host_bps * load)  # mean inter-arrival per host, s
flows = []
for src in range(hosts):
    t = rng.expovariate(1 / gap)
    while t < duration_s:
        dst = rng.randrange(hosts - 1)
        dst += dst >= src
        flows.append((base_s + t, src, dst, size()))
        t += rng.expovariate(1 / gap)
flows.sort()
with open(out_path, "w") as f:
    f.write("%d\n" % len(flows))
    for t, src, dst, n in flows:
        f.write("%d %d 3 100 %d %.9f\n" % (src, dst, n, t))
PY
  sed -e "s|^TOPOLOGY_FILE .*|TOPOLOGY_FILE topology.txt|" -e "s|^FLOW_FILE .*|FLOW_FILE flow.txt|" \
      -e "s|ft-k4-websearch|fat-tree-320|g" "$corpus/hpcc-ns3/ft-k4-websearch/config.txt" > "$d/config.txt"
}

for e in "${experiments[@]}"; do
  d=$corpus/hpcc-ns3/$e
  if [ "$e" = fat-tree-320 ]; then
    d=$work/inputs/$e
    make_fat_tree_320 "$d"
  fi
  [ -f "$d/config.txt" ] || { echo "error: $d/config.txt not found" >&2; exit 2; }
  out=$work/$e
  mkdir -p "$out/lossless" "$out/fork"

  /usr/bin/time -v -o "$out/lossless.time" "$bin" sim --ns3 "$d/config.txt" \
    --ns3-topology "$d/topology.txt" --ns3-flows "$d/flow.txt" --ns3-out "$out/lossless" -q --threads 1 \
    2>"$out/lossless.err" || { cat "$out/lossless.err" >&2; exit 1; }
  read -r lw lu lr < <(times_of "$out/lossless.time")
  read -r l50 l95 l99 < <(slowdowns "$out/lossless/fct.txt")
  printf '%-16s %-9s %9.2f %9.2f %10.1f %8s %8s %8s\n' "$e" lossless "$lw" "$lu" "$(mb "$lr")" "$l50" "$l95" "$l99"

  if [ -n "$fork" ]; then
    # the experiment's config with its files at absolute paths (the fork reads them relative
    # to its working directory, simulation/)
    sed -e "s|^TOPOLOGY_FILE .*|TOPOLOGY_FILE $d/topology.txt|" \
        -e "s|^FLOW_FILE .*|FLOW_FILE $d/flow.txt|" \
        -e "s|^TRACE_FILE .*|TRACE_FILE $d/trace_nodes.txt|" \
        -e "s|^TRACE_OUTPUT_FILE .*|TRACE_OUTPUT_FILE $out/fork/mix.tr|" \
        -e "s|^FCT_OUTPUT_FILE .*|FCT_OUTPUT_FILE $out/fork/fct.txt|" \
        -e "s|^PFC_OUTPUT_FILE .*|PFC_OUTPUT_FILE $out/fork/pfc.txt|" \
        -e "s|^QLEN_MON_FILE .*|QLEN_MON_FILE $out/fork/qlen.txt|" \
        "$d/config.txt" > "$out/fork/config.txt"
    (cd "$fork" && /usr/bin/time -v -o "$out/fork.time" build/scratch/third "$out/fork/config.txt" \
      > "$out/fork.out" 2>&1) || { tail -5 "$out/fork.out" >&2; exit 1; }
    read -r fw fu fr < <(times_of "$out/fork.time")
    read -r f50 f95 f99 < <(slowdowns "$out/fork/fct.txt")
    label=fork
  elif [ "$e" = fat-tree-320 ]; then
    # issue 13's figures for the fork on this machine type: about 100 s, 341 MB (no fct.txt)
    fw=100 fu=100 fr=$((341 * 1024)) f50=- f95=- f99=-
    label="issue 13"
  else
    read -r fw fu fr < <(times_of "$d/time.txt")
    read -r f50 f95 f99 < <(slowdowns "$d/fct.txt")
    label=recorded
  fi
  printf '%-16s %-9s %9.2f %9.2f %10.1f %8s %8s %8s\n' "$e" "$label" "$fw" "$fu" "$(mb "$fr")" "$f50" "$f95" "$f99"
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.1f×", b / a; else print "(too short to time)" }'; }
  echo "  $e: lossless is $(ratio "$lw" "$fw") faster by wall time, $(ratio "$lu" "$fu") by user CPU, $(ratio "$lr" "$fr") less peak memory"
done
