#!/usr/bin/env bash
# Issue 22's scaling figures for the 320-host fat tree (the HPCC ns-3 corpus's topology,
# WebSearch at 30 %, DCQCN, 200 µs) and a 1,024-host fat tree (k = 16, the same traffic).
#
# First it prints the model of the windowed barrier measured on the sequential run
# (crates/sim/src/experiments/partition_model.rs), which needs no cores to spare: per
# partition count, the automatic partitioning's cut links and lookahead, the windows,
# events and cross-partition frames per window, the critical path (the busiest partition's
# events summed over windows) and the speed-up it allows, statically and with the groups
# placed per window by the previous window's cost, (engine×) the engine's default partitions
# (one a thread) as it places them, and (channels×) the partitions on channel clocks instead
# of windows; then each partitioning's balance by links, by the frames expected on each
# flow's path (the partitioner's weights) and by the groups' actual events. The predicted
# speed-up adds this machine's barrier cost (std::sync::Barrier, 2 threads) per window. docs/benchmarks.md keeps
# the figures. With FORK_DIR it also runs the HPCC ns-3 fork side by side on one core
# (scripts/bench-vs-ns3.sh).
#
# With THREADS=T it then runs the partitioned engine itself on both trees (the 320-host one for
# SPLIT_DURATION, 1ms by default) and on a k = 8 tree (128 hosts, WebSearch 30 % without a
# transport, 5 ms): T partitions on T threads (static, the engine before load-adaptive
# placement) against 4T partitions placed each window by their events (the default), under
# /usr/bin/time for the peak RSS; each line has the busy seconds per thread and the critical
# path (the busiest thread per window, in seconds and in events: the events are the same on
# every machine, the seconds the steadier figure on a loaded one). docs/parallel.md, "The
# scheduler".
#
#   scripts/bench-scaling.sh [FORK_DIR]      PARTS=1,2,4,8,16 by default; THREADS unset: no
#                                            engine runs
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${LOSSLESS_CORPUS:-$(cd .. && pwd)/shared/corpus}
parts=${PARTS:-1,2,4,8,16}
cargo build --release --locked -q -p lossless-sim --example simrun
sim=target/release/examples/simrun
echo "== 320-host fat tree (fat-tree-320.topology.txt), WebSearch 30 %, DCQCN, 200 us"
LOSSLESS_CORPUS=$corpus $sim fat-tree-websearch --model "$parts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/fat-tree-k16.toml" <<TOML
name = "fat-tree-k16-websearch"
description = "1,024 hosts (k = 16), 100 Gb/s, WebSearch at 30 %, DCQCN"
seed = 1
duration = "${DURATION:-100us}"

[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]

[qp]
cc = "dcqcn"
preset = "hpcc-ns3"
rocev2 = { preset = "perftest" }

[ecn]
preset = "hpcc-ns3"
priorities = [3]

[fabric]
kind = "fat-tree"
k = 16
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
cdf_file = "$corpus/workloads/WebSearch_distribution.txt"
load = 0.3
transport = "rocev2"
TOML
echo "== 1,024-host fat tree (k = 16), WebSearch 30 %, DCQCN, ${DURATION:-100us}"
$sim "$tmp/fat-tree-k16.toml" --model "$parts"
if [ -n "${THREADS:-}" ]; then
  t=$THREADS
  cat > "$tmp/ft8.toml" <<TOML
name = "ft8"
seed = 1
duration = "5ms"
[defaults]
rate = "100G"
flow_control = "pfc"
pfc_priorities = [3]
[fabric]
kind = "fat-tree"
k = 8
host_rate = "100G"
delay = "1us"
[fabric.switch]
buffer_bytes = 2000000
alpha = 0.125
[[workload]]
name = "websearch"
src = ["h*"]
dst = ["h*"]
priority = 3
cdf_file = "$corpus/workloads/WebSearch_distribution.txt"
load = 0.3
TOML
  for split in "$t:$t:static" "$t:$((4 * t)):events"; do
    echo "== the engine, --split $split"
    LOSSLESS_CORPUS=$corpus /usr/bin/time -f "   peak RSS %M KB" $sim fat-tree-websearch "${SPLIT_DURATION:-1ms}" --split "$split"
    LOSSLESS_CORPUS=$corpus /usr/bin/time -f "   peak RSS %M KB" $sim "$tmp/ft8.toml" --split "$split"
    /usr/bin/time -f "   peak RSS %M KB" $sim "$tmp/fat-tree-k16.toml" --split "$split"
  done
fi
if [ -n "${1:-}" ]; then
  echo "== the HPCC ns-3 fork beside lossless, one core each"
  scripts/bench-vs-ns3.sh "$1"
fi
