#!/bin/sh
# Runs every test binary given as argument (cmocka) and every tests/*.sh shell
# test, then prints one closing line: "N passed, N failed".
# Shell tests get BUILD (the build dir) and TESTS_DIR in their environment.
set -u
BUILD=${BUILD:-build}
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
export BUILD TESTS_DIR
pass=0; fail=0; failed=""
for t in "$@"; do
    if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed="$failed $t"; fi
done
for t in "$TESTS_DIR"/*.sh; do
    [ -e "$t" ] || continue
    case "$t" in */run_tests.sh|*/lib_*.sh) continue;; esac
    echo "[ SHELL    ] $(basename "$t")"
    if sh "$t"; then
        echo "[       OK ] $(basename "$t")"; pass=$((pass + 1))
    else
        echo "[  FAILED  ] $(basename "$t")"; fail=$((fail + 1)); failed="$failed $t"
    fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
