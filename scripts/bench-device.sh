#!/usr/bin/env bash
# Issue 22's figures on a lent multi-core machine that has no network and no Rust toolchain:
# this script prepares, here, a folder with a stripped `lossless` and every input, and a
# `run.sh` in it that runs there and needs only bash, coreutils and /usr/bin/time.
#
#   scripts/bench-device.sh [DIR]      default DIR: target/dev (ignored by git, so it can be
#                                      carried: the device tool's `carry: ["target/dev"]`)
#   then, on the machine:  OUT=$OUT target/dev/run.sh | tee $OUT/summary.txt
#
# run.sh times `lossless sim` (`-q --json`, under /usr/bin/time) on the 320-host fat tree of
# scripts/bench-vs-ns3.sh (2 ms of WebSearch arrivals, DCQCN, 51,960,604 events) at 1, 2, 4, 8
# and 16 threads (at 2 and 16 also with `--wait-policy passive`: what the spinning barrier
# saves) and at 8 and 16 with one partition a thread (and those 16 on one thread; and 32 on
# 16 threads), on the
# corpus's ft-k4-websearch (its own topology: until 2026-12-07 the 320-host one was given),
# and on the k = 16 (DCQCN, 1 ms) and k = 32 (plain, 0.5 ms) fat trees of
# scripts/bench-scale.sh; each line says whether the run's fct.txt or JSON is the one-thread
# run's. Beside them, one-thread runs of the 320-host input at once (2 on CPUs 0 and 1, 2 on
# CPUs 0 and N/2, N on all N), pinned: whether the machine itself gives N cores' worth, and the
# machine's topology (siblings of each CPU). docs/benchmarks.md ("On a 16-core machine") keeps
# the figures of 2026-12-06.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-target/dev}
corpus=${LOSSLESS_CORPUS:-$(cd .. && pwd)/shared/corpus}
[ -f "$corpus/workloads/WebSearch_distribution.txt" ] || { echo "no corpus at $corpus (set LOSSLESS_CORPUS)" >&2; exit 2; }
cargo build --release --locked -q -p lossless-cli
rm -rf "$dir" && mkdir -p "$dir"
cp target/release/lossless "$dir/lossless" && strip "$dir/lossless"
# the inputs, made by the scripts that define them
eval "$(sed -n '/^make_fat_tree_320() {/,/^}/p' scripts/bench-vs-ns3.sh)"
make_fat_tree_320 "$dir/ft320"
cp -r "$corpus/hpcc-ns3/ft-k4-websearch" "$dir/ftk4" && chmod -R u+w "$dir/ftk4"
cp "$corpus/workloads/WebSearch_distribution.txt" "$dir/"
eval "$(sed -n '/^scenario() {/,/^}/p' scripts/bench-scale.sh)"
cdf=WebSearch_distribution.txt load=0.3
scenario 16 dcqcn >"$dir/k16.toml"
scenario 32 plain >"$dir/k32.toml"
cat >"$dir/run.sh" <<'EOF'
#!/bin/bash
# made by scripts/bench-device.sh: run on the lent machine, OUT=folder ./run.sh
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA|MHz|L2|L3"; lscpu -e; uptime
  cat /sys/kernel/mm/transparent_hugepage/enabled
  grep -H . /sys/devices/system/cpu/cpu*/topology/thread_siblings_list; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
ev() { grep -o '"events": [0-9]*' "$1" | head -1 | grep -o '[0-9]*'; }
line() { # NAME THREADS EXTRA DIR SAME
  local w u m e; read -r w u m < "$4/time"; e=$(ev "$4/r.json")
  printf '%-6s threads %-3s %-16s wall %6.2f s user %7.2f s rss %8d kB events %s  %s M ev/s  %s\n' \
    "$1" "$2" "$3" "$w" "$u" "$m" "$e" "$(awk -v e="$e" -v w="$w" 'BEGIN { printf "%.2f", e / w / 1e6 }')" "$5"
}
ns3() { # NAME CONFIG TOPOLOGY FLOWS THREADS [extra]
  local name=$1 cfg=$2 topo=$3 flows=$4 t=$5; shift 5
  local o="$OUT/$name-t$t$*"; o=${o// /}; mkdir -p "$o"
  # (not -q: the engine's line of windows, busy and waiting seconds per thread goes to err)
  /usr/bin/time -f "%e %U %M" -o "$o/time" ./lossless sim --ns3 "$cfg" --ns3-topology "$topo" --ns3-flows "$flows" \
    --ns3-out "$o" --threads "$t" "$@" --json "$o/r.json" >"$o/out" 2>"$o/err" || { tail -3 "$o/err"; return; }
  local same=one-thread; [ "$o" != "$OUT/$name-t1" ] && { cmp -s "$OUT/$name-t1/fct.txt" "$o/fct.txt" && same=fct-same || same=FCT-DIFFERS; }
  line "$name" "$t" "$*" "$o" "$same"
  grep -h "windows of" "$o/err" | cut -c1-400 || true
}
copies() { # N CPU...: N one-thread runs of ft320 at once, each pinned to its CPU: does the
  # machine give N cores' worth (each as fast as one alone), whatever the engine does?
  local n=$1; shift; local o="$OUT/copies$n"; mkdir -p "$o"
  local i=0
  for c in "$@"; do
    taskset -c "$c" /usr/bin/time -f "%e %U" -o "$o/time$i" ./lossless sim --ns3 "${F[0]}" --ns3-topology "${F[1]}" \
      --ns3-flows "${F[2]}" --ns3-out "$o/$i" -q --threads 1 2>/dev/null &
    i=$((i + 1))
  done
  wait
  printf 'copies %-2s on cpus %-12s wall s:' "$n" "$(echo "$@" | tr ' ' ,)"
  for j in $(seq 0 $((i - 1))); do printf ' %s' "$(cut -d' ' -f1 "$o/time$j")"; done; echo
  rm -rf "$o"
}
toml() { # NAME FILE DURATION THREADS [extra]
  local name=$1 f=$2 d=$3 t=$4; shift 4
  local o="$OUT/$name-t$t$*"; o=${o// /}; mkdir -p "$o"
  /usr/bin/time -f "%e %U %M" -o "$o/time" ./lossless sim "$f" --duration "$d" -q --no-twin --threads "$t" "$@" --json "$o/r.json" 2>"$o/err" || { tail -3 "$o/err"; return; }
  local same=one-thread; [ "$o" != "$OUT/$name-t1" ] && { cmp -s "$OUT/$name-t1/r.json" "$o/r.json" && same=json-same || same=JSON-DIFFERS; }
  line "$name" "$t" "$*" "$o" "$same"
}
F=(ft320/config.txt ft320/topology.txt ft320/flow.txt)
K=(ftk4/config.txt ftk4/topology.txt ftk4/flow.txt)
for t in 1 2 4 8 16; do ns3 ft320 "${F[@]}" $t; done
# what the spinning barrier saves: the same runs with every early thread asleep at once
for t in 2 16; do ns3 ft320 "${F[@]}" $t --wait-policy passive; done
if command -v taskset >/dev/null; then
  copies 2 0 1
  copies 2 0 $(( $(nproc) / 2 ))
  copies "$(nproc)" $(seq 0 $(( $(nproc) - 1 )))
else
  echo "no taskset: the copies runs were skipped"
fi
ns3 ft320 "${F[@]}" 8 --partitions 8
ns3 ft320 "${F[@]}" 16 --partitions 16
ns3 ft320 "${F[@]}" 16 --partitions 16 --placement static
# two partitions a thread, placed each window: the load drifts between partitions over
# hundreds of microseconds (docs/parallel.md), which only placement that moves can follow
ns3 ft320 "${F[@]}" 16 --partitions 32
# the same 16 partitions on one thread: the split's own cost on this machine's core, against
# which the 16 threads' busy seconds tell what running at once adds
ns3 ft320 "${F[@]}" 1 --partitions 16
for t in 1 2 4 16; do ns3 ftk4 "${K[@]}" $t; done
for t in 1 4 16; do toml k16 k16.toml 1ms $t; done
toml k16 k16.toml 1ms 16 --partitions 16
toml k32 k32.toml 0.5ms 1
toml k32 k32.toml 0.5ms 16 --partitions 16
# what comes back is bounded: the large outputs stay there
find "$OUT" \( -name r.json -o -name fct.txt -o -name pfc.txt -o -name qlen.txt \) -size +200k -delete
EOF
chmod +x "$dir/run.sh"
echo "prepared $dir ($(du -sh "$dir" | cut -f1)): carry it, then run OUT=\$OUT $dir/run.sh"
