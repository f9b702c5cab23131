#!/usr/bin/env bash
# Re-bless the golden outputs (crates/cli/tests/golden/outputs/) after a change of behaviour
# that is meant: runs the golden test with LOSSLESS_BLESS=1, which rewrites every golden file
# that differs and prints, per file, what changed (JSON paths old → new, differing lines, or
# hashes). Commit the result on its own, saying why the outputs changed.
#
#   scripts/bless.sh            # all golden outputs
#   scripts/bless.sh builtin    # only the tests whose name contains "builtin"
set -euo pipefail
cd "$(dirname "$0")/.."
LOSSLESS_BLESS=1 cargo test --release --locked -p lossless-cli --test golden_outputs -- --nocapture --test-threads 1 "$@" \
  | grep -E '^(blessed|      |.*golden file\(s\) rewritten)' || true
echo "== changed golden files:"
git status --short -- crates/cli/tests/golden/outputs
