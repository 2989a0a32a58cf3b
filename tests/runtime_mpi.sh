#!/bin/sh
# MPI: two ranks through mpirun; the runtime's default task id is the rank
# (OMPI_COMM_WORLD_RANK), the ranks plan the node's fast memory together
# (pd_set_allgather over MPI_Allgather): same makespan on both, planned bytes
# within the capacity; both ranks append to one per-task CSV. Skipped (with a message) when OpenMPI is not installed,
# unless RUNTIME_MPI_REQUIRED=1 (make check-runtime-mpi).
set -eu
BUILD=${BUILD:-build}
EX="$BUILD/examples/runtime/mpi_example"
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$EX" ]; then
    if [ "${RUNTIME_MPI_REQUIRED:-0}" = 1 ]; then echo "runtime_mpi: mpirun or $EX missing"; exit 1; fi
    echo "runtime_mpi: SKIPPED (no mpirun or $EX not built; make check-runtime-mpi installs OpenMPI)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# OpenMPI keeps allocations until exit, which LeakSanitizer would report in
# the ASan build; leaks of our own code are covered by the unit tests.
ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0 \
PADDISER_TASKS_CSV="$tmp/tasks.csv" PADDISER_QUIET=1 PADDISER_BACKEND=sim PADDISER_FAST_CAPACITY=4194304 \
    timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$EX" 2 2 >"$tmp/out" 2>"$tmp/err" ||
    { echo "mpirun failed"; cat "$tmp/out" "$tmp/err"; exit 1; }
for r in 0 1; do
    grep -q "^rank $r of 2: task $r," "$tmp/out" || { echo "rank $r did not run as task $r"; cat "$tmp/out" "$tmp/err"; exit 1; }
    n=$(grep -c "^rank $r of 2:" "$tmp/out")
    [ "$n" -eq 1 ] || { echo "rank $r planned $n tasks, expected its own only"; cat "$tmp/out"; exit 1; }
done
# The joint plan: one makespan, and the ranks' bytes fit the shared 4 MB.
[ "$(sed -n 's/.*joint makespan \([^ ]*\) s$/\1/p' "$tmp/out" | sort -u | wc -l)" -eq 1 ] ||
    { echo "ranks disagree on the joint plan"; cat "$tmp/out"; exit 1; }
total=$(sed -n 's/.*share [0-9.]*, \([0-9]*\) bytes,.*/\1/p' "$tmp/out" | awk '{ s += $1 } END { print s + 0 }')
[ "$total" -le 4194304 ] || { echo "joint plan uses $total bytes > 4 MB"; cat "$tmp/out"; exit 1; }
grep -q "^allreduce of first elements: 6.0 (expected 6.0)" "$tmp/out" || { echo "MPI data wrong"; cat "$tmp/out"; exit 1; }
[ "$(grep -c '^policy,task,time_s,dram_share,dram_bytes$' "$tmp/tasks.csv")" -eq 1 ] || { echo "CSV header count"; cat "$tmp/tasks.csv"; exit 1; }
tasks=$(tail -n +2 "$tmp/tasks.csv" | cut -d, -f2 | sort | tr '\n' ' ')
[ "$tasks" = "0 1 " ] || { echo "CSV tasks: '$tasks'"; cat "$tmp/tasks.csv"; exit 1; }
echo "runtime_mpi: ok"
