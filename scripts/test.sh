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
# `lossless sim --mpi` is a cargo feature: built and tested in a step of its own where OpenMPI
# and libclang are installed (install-peers.sh installs them as root)
mpi=0
if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 \
   && ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1; then
  mpi=1
  export LOSSLESS_MPI_STEP=later
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
if [ "$mpi" = 1 ]; then
  echo "== cargo clippy and test --features mpi (lossless sim --mpi under mpirun)"
  cargo clippy -p lossless-sim -p lossless-cli --all-targets --features lossless-cli/mpi --locked -- -D warnings || status=$?
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    cargo test -p lossless-cli --features mpi --locked --test sim_mpi -- --test-threads 1 || status=$?
else
  msg="SKIPPED the --features mpi step (mpirun -n 2 and -n 4 against one thread): mpirun, mpicc or libclang is missing. Run the README's test command as root to install them."
  echo "!!!!!!!! $msg"
  echo "$msg" >> "$LOSSLESS_SKIP_LOG"
fi

if [ -s "$LOSSLESS_SKIP_LOG" ]; then
  echo "!! $(sort -u "$LOSSLESS_SKIP_LOG" | wc -l) test(s) were SKIPPED for a missing peer or privilege:"
  sort -u "$LOSSLESS_SKIP_LOG" | sed 's/^/!!   /'
else
  echo "== no test was skipped"
fi
exit "$status"
