#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/) for N executions, one after another, seeded from the
# tcpdump corpus, the frames the wire emitters build, the example scenarios (scenario_toml)
# and the HPCC ns-3 corpus's experiments (ns3_files), and prints one line of counts per
# target. Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
#
#   scripts/fuzz.sh [RUNS] [TARGET...]      RUNS defaults to 1000000; targets default to all
#
# Corpora grow in fuzz/corpus/<target>; crashes land in fuzz/artifacts/<target>; the log of
# each run is fuzz/artifacts/logs/<target>.log. Exit status 1 when any target crashed.
# Reproduce a crash: cargo +nightly fuzz run -O -a <target> fuzz/artifacts/<target>/<file>
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-1000000}
shift || true
corpus_src=${LOSSLESS_CORPUS:-$root/../shared/corpus/tcpdump}
ns3_src=${LOSSLESS_NS3_CORPUS:-$root/../shared/corpus/hpcc-ns3}

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# Seeds: whole captures, their frames, LLDPDUs, TLVs and MAC Control payloads, plus the
# frames of lossless_capture::sample (built by the wire emitters); every example scenario;
# each ns-3 experiment's config, topology and first flows.
shopt -s nullglob
captures=("$corpus_src"/*.pcap "$corpus_src"/*.pcapng)
experiments=()
for d in "$ns3_src"/*/; do
    [ -f "$d/config.txt" ] && [ -f "$d/topology.txt" ] && [ -f "$d/flow.txt" ] && experiments+=("$d")
done
cargo run --quiet --manifest-path fuzz/Cargo.toml -p lossless-fuzz-seeds --target-dir "$root/target" \
    -- fuzz/corpus "${captures[@]}" examples/scenarios/*.toml "${experiments[@]}"

mkdir -p fuzz/artifacts/logs
# Build once (AddressSanitizer, debug assertions on: overflow is a crash too) and run the
# binaries of that build, so every target fuzzes the same sources.
cargo +nightly fuzz build -O --debug-assertions
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
bin=fuzz/target/$triple/release
echo "sources: $(git describe --always --dirty 2>/dev/null || echo unknown), $runs runs per target"

status=0
printf '%-16s %12s %8s %8s %8s %8s %10s %s\n' target executions seconds exec/s cov ft corpus crashes
for t in "${targets[@]}"; do
    log=fuzz/artifacts/logs/$t.log
    mkdir -p "fuzz/corpus/$t"
    start=$(date +%s.%N)
    rc=0
    mkdir -p "fuzz/artifacts/$t"
    "$bin/$t" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
    end=$(date +%s.%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    execs=$(awk '/stat::number_of_executed_units/ { print $NF }' "$log" | tail -1)
    rate=$(awk '/stat::average_exec_per_sec/ { print $NF }' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[a-zA-Z]*).*/\1/p' <<<"$last")
    crashes=$(grep -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //' | tr '\n' ' ' || true)
    if [ "$rc" -ne 0 ]; then
        status=1
        crashes=${crashes:-"exit $rc (see $log)"}
    fi
    printf '%-16s %12s %8s %8s %8s %8s %10s %s\n' "$t" "${execs:-?}" "$secs" "${rate:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "${crashes:-0}"
done
exit $status
