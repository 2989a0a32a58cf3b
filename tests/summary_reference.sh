#!/bin/sh
# Randomised cross-check of the run summary against the Python reference in
# summary_reference.py (60 generated runs, fixed seed: reproducible).
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "summary_reference: SKIP (no python3)"; exit 0; }
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-summary-ref.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$TESTS_DIR/summary_reference.py" "$PD" "$T" 1 60
