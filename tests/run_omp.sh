#!/bin/sh
# `paddiser run`, OpenMP with GCC's libgomp (issue #14): unmodified programs
# built with gcc -fopenmp give the same output under libpaddiser-preload.so,
# and the preload's interposed GOMP_* entry points make each thread of each
# distinct parallel region a task (task id = region * 64 + thread) in the
# per-task CSV: static and dynamic loops, reductions, sections, an explicit
# barrier (its waits excluded from task times), a nested region (not tasks),
# the old GOMP_parallel_start/_end ABI, and a program with no parallel
# region (nothing found). The sync point runs after every region, or every
# PADDISER_RUN_SYNC_EVERY regions; a region too short to pay for it runs
# untracked after its first instances.
set -eu
NAME=run_omp
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run_omp.sh"
command -v gcc >/dev/null 2>&1 || missing "no gcc"

gcc -O2 -fopenmp -o "$tmp/regions" "$FIX/omp_regions.c" || fail "cannot build omp_regions.c"
gcc -O2 -fopenmp -o "$tmp/old_abi" "$FIX/omp_old_abi.c" || fail "cannot build omp_old_abi.c"
export OMP_MAX_ACTIVE_LEVELS=2 OMP_PROC_BIND=false

# Four distinct regions, two rounds: 4 x 3 tasks, one sync point per region.
run_pair work "$tmp/regions" work 2
expect_tasks work "0 1 2 64 65 66 128 129 130 192 193 194"
expect_count work regions "$(regions_of work)" 4
expect_count work "sync points" "$(syncs_of work)" 8
grep -q '^paddiser run: sync point 8 after 8 region(s): ok, 8 instance(s)$' "$tmp/work.err" ||
    fail "work: the last sync point did not close instance 8: $(cat "$tmp/work.err")"

# Every 4 regions: two sync points (after regions 4 and 8), two instances.
PADDISER_RUN_SYNC_EVERY=4 run_pair every4 "$tmp/regions" work 2
expect_tasks every4 "0 1 2 64 65 66 128 129 130 192 193 194"
expect_count every4 "sync points" "$(syncs_of every4)" 2
grep -q '^paddiser run: sync point 2 after 8 region(s): ok, 2 instance(s)$' "$tmp/every4.err" ||
    fail "every4: $(cat "$tmp/every4.err")"

# A region filter (PADDISER_RUN_REGIONS, --regions): only the second
# region, named as --verbose printed it, is tasks; the others run untracked.
second=$(sed -n 's/^paddiser run: region 1: \([^ ]*\) .*/\1/p' "$tmp/work.err")
[ -n "$second" ] || fail "work: no name printed for region 1: $(cat "$tmp/work.err")"
PADDISER_RUN_REGIONS="no-such-region,$second" run_pair filtered "$tmp/regions" work 2
expect_tasks filtered "64 65 66"
expect_count filtered "sync points" "$(syncs_of filtered)" 2
grep -q "^paddiser run: region 0: .*not in PADDISER_RUN_REGIONS, untracked" "$tmp/filtered.err" ||
    fail "filtered: region 0 not reported untracked: $(cat "$tmp/filtered.err")"

# Nested: the outer region's 3 threads are tasks, the inner teams are not.
run_pair nested "$tmp/regions" nested
grep -q '^nested: 6 inner threads$' "$tmp/nested.out" || fail "nested: inner regions did not nest: $(cat "$tmp/nested.out")"
expect_tasks nested "0 1 2"
# Thread 0's work after its nested region is still its task's.
awk -v t="$(time_of nested 0)" 'BEGIN { exit !(t >= 0.2) }' ||
    fail "nested: task 0 ran $(time_of nested 0) s, less than the 0.2 s after its nested region"
expect_count nested regions "$(regions_of nested)" 1

run_pair wait "$tmp/regions" wait
expect_tasks wait "0 1 2"
expect_barrier_waits_excluded wait

# Old ABI: the encountering thread runs the body itself between start and end.
run_pair old_abi "$tmp/old_abi"
grep -q '^old abi: 3 3, loop sum 4950$' "$tmp/old_abi.out" || fail "old_abi: wrong result: $(cat "$tmp/old_abi.out")"
expect_tasks old_abi "0 1 64 65"
expect_count old_abi "sync points" "$(syncs_of old_abi)" 4

# Regions too short to pay for being tracked: untracked after 4 instances.
expect_short_regions_untracked "$tmp/regions"
# ... and tracked again once it grows.
expect_grown_region_tracked_again "$tmp/regions"

# No parallel region: nothing found, nothing changed.
run_pair none "$tmp/regions" none
expect_tasks none ""
expect_count none regions "$(regions_of none)" 0
echo "run_omp: ok"
