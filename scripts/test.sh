#!/usr/bin/env bash
# The whole test suite of lossless. Run as root on a fresh machine, it first installs the
# external peers the tests compare against (tshark, tcpdump, lldpad, lldpd, iproute2, scapy) and
# then requires them: a test that cannot find its peer fails instead of skipping. Run as an
# ordinary user it installs nothing, and tests whose peer is missing say loudly that they skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && [ "${LOSSLESS_NO_INSTALL:-0}" != 1 ]; then
  scripts/install-peers.sh
  export LOSSLESS_REQUIRE_PEERS=1
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
echo "== cargo test"
export LOSSLESS_SKIP_LOG="$PWD/target/lossless-skipped.txt"
mkdir -p target && : > "$LOSSLESS_SKIP_LOG"
status=0
cargo test --workspace --all-targets --locked --no-fail-fast || status=$?
# doc tests are not part of --all-targets
cargo test --workspace --doc --locked || status=$?

if [ -s "$LOSSLESS_SKIP_LOG" ]; then
  echo "!! $(sort -u "$LOSSLESS_SKIP_LOG" | wc -l) test(s) were SKIPPED for a missing peer or privilege:"
  sort -u "$LOSSLESS_SKIP_LOG" | sed 's/^/!!   /'
else
  echo "== no test was skipped"
fi
exit "$status"
