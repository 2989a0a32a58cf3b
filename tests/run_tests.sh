#!/bin/sh
# Runs every test binary given as argument (cmocka) and every tests/*.sh shell
# test, then prints one closing line: "N passed, N failed" counting cmocka
# test cases and shell tests. A binary that crashes counts as one failure.
# Shell tests get BUILD (the build dir) and TESTS_DIR in their environment.
set -u
BUILD=${BUILD:-build}
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
export BUILD TESTS_DIR
pass=0; fail=0; failed=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -n 1)
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
    if [ "$rc" -ne 0 ]; then
        [ -z "$f" ] && fail=$((fail + 1))
        failed="$failed $(basename "$t")"
    fi
done
for t in "$TESTS_DIR"/*.sh; do
    [ -e "$t" ] || continue
    case "$t" in */run_tests.sh|*/lib_*.sh) continue;; esac
    echo "[ SHELL    ] $(basename "$t")"
    if sh "$t"; then
        echo "[       OK ] $(basename "$t")"; pass=$((pass + 1))
    else
        echo "[  FAILED  ] $(basename "$t")"; fail=$((fail + 1)); failed="$failed $(basename "$t")"
    fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
