#!/bin/sh
# The OpenMP example runs to the end with the simulated backend: four tasks
# (one per thread) are profiled, planned within the fast capacity, and the
# per-task CSV has one row per task.
set -eu
BUILD=${BUILD:-build}
EX="$BUILD/examples/runtime/omp_example"
[ -x "$EX" ] || { echo "runtime_examples: $EX not built (make runtime-examples)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PADDISER_TASKS_CSV="$tmp/tasks.csv" PADDISER_POLICY=lb OMP_NUM_THREADS=4 \
    "$EX" 2 2 4 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; exit 1; }
for t in 0 1 2 3; do
    n=$(grep -c "^  task $t:" "$tmp/out" || true)
    [ "$n" -eq 2 ] || { echo "task $t: expected 2 instance lines, got $n"; cat "$tmp/out"; exit 1; }
done
grep -q "^backend sim, 64 samples of 2097152 bytes" "$tmp/out" || { echo "unexpected summary"; cat "$tmp/out"; exit 1; }
# Planned bytes of each instance never exceed the 4 MB fast capacity.
awk '/^instance/ { if (total > 4194304) bad = 1; total = 0 }
     /^  task/ { for (i = 2; i <= NF; i++) if ($i == "bytes,") total += $(i - 1) }
     END { if (total > 4194304) bad = 1; exit bad }' "$tmp/out" || { echo "plan exceeds capacity"; cat "$tmp/out"; exit 1; }
[ "$(head -n 1 "$tmp/tasks.csv")" = "policy,task,time_s,dram_share,dram_bytes" ] || { echo "bad CSV header"; cat "$tmp/tasks.csv"; exit 1; }
[ "$(grep -c '^lb,' "$tmp/tasks.csv")" -eq 4 ] || { echo "expected 4 CSV rows"; cat "$tmp/tasks.csv"; exit 1; }
# Bad arguments give a usage message, not a crash.
if "$EX" 0 >/dev/null 2>"$tmp/err"; then echo "instances=0 accepted"; exit 1; fi
grep -q usage "$tmp/err"
echo "runtime_examples: ok"
