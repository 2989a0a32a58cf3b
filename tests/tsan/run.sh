#!/bin/sh
# check-tsan's runner: run.sh LOGDIR TEST... (cmocka binaries and shell
# tests, *.sh). TSAN_OPTIONS (set by mk/tsan.mk) sends every TSan report of
# every process to LOGDIR/report.<pid>, so a report from a binary that a
# shell test starts is caught too, whatever that test expects of its exit
# status. Fails when a test fails or any report was written.
set -u
logdir=$1; shift
TESTS_DIR=$(cd "$(dirname "$0")/.." && pwd)
export TESTS_DIR
pass=0; fail=0; failed=""
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in "$@"; do
    case "$t" in
    *.sh)
        echo "[ SHELL    ] $(basename "$t")"
        if sh "$t"; then
            echo "[       OK ] $(basename "$t")"; pass=$((pass + 1))
        else
            echo "[  FAILED  ] $(basename "$t")"; fail=$((fail + 1)); failed="$failed $(basename "$t")"
        fi
        continue;;
    esac
    "$t" >"$out" 2>&1
    rc=$?
    cat "$out"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$out" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$out" | tail -n 1)
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0}))
    if [ "$rc" -ne 0 ]; then
        [ -z "$f" ] && fail=$((fail + 1))
        failed="$failed $(basename "$t")"
    fi
done
reports=$(ls "$logdir" 2>/dev/null | wc -l)
if [ "$reports" -gt 0 ]; then
    for r in "$logdir"/*; do
        echo "==== $r"
        cat "$r"
    done
    echo "check-tsan: ThreadSanitizer reports from $reports process(es), logs in $logdir"
    fail=$((fail + 1)); failed="$failed (tsan-reports)"
fi
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
