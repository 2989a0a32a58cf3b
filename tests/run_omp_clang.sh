#!/bin/sh
# `paddiser run`, OpenMP with LLVM's libomp (issue #14): programs built with
# clang -fopenmp give the same output under libpaddiser-preload.so, whose
# OMPT tool (ompt_start_tool) makes each thread of each distinct parallel
# region a task, as with libgomp (tests/run_omp.sh): the same regions give
# the same task ids. A gcc-built program run on libomp (its GOMP_* entry
# points) has each region counted once, by the outlined function. The
# preload's own OMPT declarations match the installed omp-tools.h.
# Skipped (with a message) without clang or libomp-dev, unless
# RUN_OMP_REQUIRED=1 (make check-run-omp installs them).
set -eu
NAME=run_omp_clang
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run_omp.sh"
command -v clang >/dev/null 2>&1 || missing "no clang"
printf '#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n' >"$tmp/probe.c"
clang -fopenmp -o "$tmp/probe" "$tmp/probe.c" >/dev/null 2>&1 || missing "clang -fopenmp cannot link (no libomp-dev)"

SRC=$(cd "$TESTS_DIR/.." && pwd)/src
clang -fsyntax-only -Wall -I"$SRC" "$FIX/ompt_abi_check.c" ||
    fail "src/preload/ompt_abi.h disagrees with omp-tools.h"

clang -O2 -fopenmp -o "$tmp/regions" "$FIX/omp_regions.c" || fail "cannot build omp_regions.c"
export OMP_MAX_ACTIVE_LEVELS=2 OMP_PROC_BIND=false

run_pair work "$tmp/regions" work 2
grep -q '^paddiser run: OMPT tool active' "$tmp/work.err" || fail "work: the OMPT tool did not start: $(cat "$tmp/work.err")"
expect_tasks work "0 1 2 64 65 66 128 129 130 192 193 194"
expect_count work regions "$(regions_of work)" 4
expect_count work "sync points" "$(syncs_of work)" 8
grep -q '^paddiser run: sync point 8 after 8 region(s): ok, 8 instance(s)$' "$tmp/work.err" ||
    fail "work: the last sync point did not close instance 8: $(cat "$tmp/work.err")"

PADDISER_RUN_SYNC_EVERY=4 run_pair every4 "$tmp/regions" work 2
expect_count every4 "sync points" "$(syncs_of every4)" 2

# Regions too short to pay for being tracked: untracked after 4 instances.
expect_short_regions_untracked "$tmp/regions"
# ... and tracked again once it grows.
expect_grown_region_tracked_again "$tmp/regions"

run_pair nested "$tmp/regions" nested
grep -q '^nested: 6 inner threads$' "$tmp/nested.out" || fail "nested: inner regions did not nest: $(cat "$tmp/nested.out")"
expect_tasks nested "0 1 2"
# Thread 0's work after its nested region is still its task's.
awk -v t="$(time_of nested 0)" 'BEGIN { exit !(t >= 0.2) }' ||
    fail "nested: task 0 ran $(time_of nested 0) s, less than the 0.2 s after its nested region"
expect_count nested regions "$(regions_of nested)" 1

# libomp reports the end of a region's own barrier to worker threads only
# when they start the next region: their tasks must still have ended there.
run_pair wait "$tmp/regions" wait
expect_tasks wait "0 1 2"
expect_barrier_waits_excluded wait

run_pair none "$tmp/regions" none
expect_tasks none ""
expect_count none regions "$(regions_of none)" 0

# gcc-built code on libomp: libomp's GOMP_parallel runs the OMPT callbacks
# too, the GOMP hooks pass through, each region is found once (4 regions,
# the same 12 tasks).
libomp=$(clang -fopenmp -print-file-name=libomp.so)
[ -f "$libomp" ] || libomp=$(ldd "$tmp/regions" | awk '/libomp/ { print $3; exit }')
if command -v gcc >/dev/null 2>&1 && [ -f "$libomp" ]; then
    gcc -O2 -fopenmp -o "$tmp/gcc_regions" "$FIX/omp_regions.c" || fail "cannot build omp_regions.c with gcc"
    EXTRA_PRELOAD=$libomp run_pair gomp_on_libomp "$tmp/gcc_regions" work 2
    grep -q "GOMP_\* entry points are LLVM libomp's" "$tmp/gomp_on_libomp.err" ||
        fail "gomp_on_libomp: libomp was not used: $(cat "$tmp/gomp_on_libomp.err")"
    expect_tasks gomp_on_libomp "0 1 2 64 65 66 128 129 130 192 193 194"
    expect_count gomp_on_libomp regions "$(regions_of gomp_on_libomp)" 4
    expect_count gomp_on_libomp "sync points" "$(syncs_of gomp_on_libomp)" 8
fi
echo "run_omp_clang: ok"
