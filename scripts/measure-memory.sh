#!/usr/bin/env bash
# Measures what the simulator holds per element, as docs/limits.md states it: the peak
# resident memory (/usr/bin/time -f %M) of two sizes of one scenario, so that what does not
# grow cancels out, for plain flows, RoCEv2 QPs, hosts with their link and HPCC ns-3 flows.
# Each run lasts 1 ns of simulated time: what is measured is the state built for the
# elements and their reports.
#
#   scripts/measure-memory.sh [LOSSLESS]    LOSSLESS defaults to target/debug/lossless
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/debug/lossless}
corpus=${LOSSLESS_NS3_CORPUS:-$root/../shared/corpus/hpcc-ns3}/incast-8
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# 100 senders s*, 100 receivers d* on one switch; K [[flow]] entries s* -> d*, 10,000 flows each
flows() {
    printf 'name = "m"\nduration = "1ns"\n[defaults]\nrate = "100G"\n'
    printf '[[host]]\nname = "s"\ncount = 100\n[[host]]\nname = "d"\ncount = 100\n'
    printf '[[switch]]\nname = "sw"\nbuffer_bytes = 32000000\n'
    printf '[[link]]\na = "s*"\nb = "sw"\n[[link]]\na = "d*"\nb = "sw"\n'
    for ((i = 0; i < $2; i++)); do
        printf '[[flow]]\nname = "f%d"\nsrc = "s*"\ndst = "d*"\npriority = 3\nsize_bytes = 100000\n' "$i"
        [ "$1" = rocev2 ] && printf 'transport = "rocev2"\n'
    done
    return 0
}
hosts() {
    printf 'name = "m"\nduration = "1ns"\n[defaults]\nrate = "100G"\n[[host]]\nname = "h"\ncount = %d\n' "$1"
    printf '[[switch]]\nname = "sw"\nbuffer_bytes = 32000000\n[[link]]\na = "h*"\nb = "sw"\n'
}
# peak resident memory, KiB
peak() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
row() { # what, small count, large count, small KB, large KB
    awk -v w="$1" -v a="$2" -v b="$3" -v x="$4" -v y="$5" \
        'BEGIN { printf "| %s (%d → %d) | %.1f MB | %.1f MB | %.2f kB |\n", w, a, b, x * 1.024 / 1000, y * 1.024 / 1000, (y - x) * 1.024 / (b - a) }'
}

echo "| what | small | large | per element |"
echo "| --- | --- | --- | --- |"
for kind in plain rocev2; do
    flows $kind 1 >$kind-1.toml
    flows $kind 4 >$kind-4.toml
    row "$kind flows" 10000 40000 "$(peak "$bin" sim $kind-1.toml -q --no-twin --threads 1)" \
        "$(peak "$bin" sim $kind-4.toml -q --no-twin --threads 1)"
done
hosts 2000 >h-2000.toml
hosts 8000 >h-8000.toml
row "hosts with their link" 2000 8000 "$(peak "$bin" sim h-2000.toml -q --no-twin --threads 1)" \
    "$(peak "$bin" sim h-8000.toml -q --no-twin --threads 1)"
if [ -f "$corpus/config.txt" ]; then
    sed -e 's/^SIMULATOR_STOP_TIME.*/SIMULATOR_STOP_TIME 0.000000001/' -e '/^QLEN_MON/d' \
        "$corpus/config.txt" >config.txt
    kb=()
    for n in 10000 40000; do
        { echo $n; for ((i = 0; i < n; i++)); do echo "$((i % 8)) 8 3 100 1000000 2.0"; done; } >flows-$n.txt
        mkdir -p o$n
        kb+=("$(peak "$bin" sim --ns3 config.txt --ns3-topology "$corpus/topology.txt" \
            --ns3-flows flows-$n.txt --ns3-out o$n -q)")
    done
    row "ns-3 flows, each a QP" 10000 40000 "${kb[0]}" "${kb[1]}"
else
    echo "(no HPCC ns-3 corpus at $corpus: ns-3 flows not measured)" >&2
fi
