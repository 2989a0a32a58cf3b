# Sourced by tests/run_omp*.sh (`paddiser run`, OpenMP: issue #14): runs an
# unmodified program with and without libpaddiser-preload.so and reads what
# the preload found. Callers set NAME first. Not a test itself (run_tests.sh
# skips lib_*.sh).
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
FIX="$TESTS_DIR/fixtures/run_omp"
PRELOAD="$(cd "$BUILD" 2>/dev/null && pwd)/libpaddiser-preload.so"

fail() { echo "$NAME: $*"; exit 1; }

# A compiler or library the test needs is missing: skipped, unless
# RUN_OMP_REQUIRED=1 (make check-run-omp installs the packages first).
missing() {
    [ "${RUN_OMP_REQUIRED:-0}" = 1 ] && fail "$1 (RUN_OMP_REQUIRED=1)"
    echo "$NAME: SKIPPED ($1; make check-run-omp installs it)"
    exit 0
}

[ -f "$PRELOAD" ] || fail "$BUILD/libpaddiser-preload.so not built (make all)"
# An ASan build of the library (check-asan) needs the ASan runtime loaded
# first; the OpenMP runtimes keep their thread pools until exit.
PRELOADS="$PRELOAD"
asan_rt=$(ldd "$PRELOAD" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
if [ -n "$asan_rt" ]; then
    PRELOADS="$asan_rt $PRELOAD"
    ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0
    export ASAN_OPTIONS
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_pair TAG PROGRAM ARGS...: the program alone ($tmp/TAG.plain), then
# under the preload with the simulated backend ($tmp/TAG.out, .err, .csv);
# their outputs must be equal. Extra preloads: EXTRA_PRELOAD (after ours).
run_pair() {
    tag=$1
    shift
    timeout 120 "$@" >"$tmp/$tag.plain" 2>&1 || fail "$tag: the program alone failed: $(cat "$tmp/$tag.plain")"
    rm -f "$tmp/$tag.csv"
    PADDISER_TASKS_CSV="$tmp/$tag.csv" PADDISER_QUIET=1 PADDISER_BACKEND=sim PADDISER_RUN_VERBOSE=1 \
        LD_PRELOAD="$PRELOADS${EXTRA_PRELOAD:+ }${EXTRA_PRELOAD:-}" timeout 120 "$@" >"$tmp/$tag.out" 2>"$tmp/$tag.err" ||
        fail "$tag: the program failed under the preload: $(cat "$tmp/$tag.out" "$tmp/$tag.err")"
    cmp -s "$tmp/$tag.plain" "$tmp/$tag.out" ||
        fail "$tag: output changed under the preload: '$(cat "$tmp/$tag.plain")' vs '$(cat "$tmp/$tag.out")'"
}

# Task ids in TAG's CSV, sorted, one line ("" when none ran).
tasks_of() {
    [ -f "$tmp/$1.csv" ] || return 0
    tail -n +2 "$tmp/$1.csv" | cut -d, -f2 | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# time_s of task ID in TAG's CSV.
time_of() { awk -F, -v t="$2" 'NR > 1 && $2 == t { print $3 }' "$tmp/$1.csv"; }

# Distinct regions the preload logged for TAG, and its sync points.
regions_of() { grep -c '^paddiser run: region [0-9]*: .*: tasks ' "$tmp/$1.err"; }
syncs_of() { grep -c '^paddiser run: sync point [0-9]* after' "$tmp/$1.err"; }

expect_tasks() {
    got=$(tasks_of "$1")
    [ "$got" = "$2" ] || fail "$1: tasks '$got', expected '$2' ($(cat "$tmp/$1.err"))"
}

expect_count() { # TAG WHAT GOT EXPECTED
    [ "$3" -eq "$4" ] || fail "$1: $3 $2, expected $4 ($(cat "$tmp/$1.err"))"
}

# The region with an explicit barrier (omp_regions wait): thread 0 works
# 600 ms, the others only wait at its two barriers, so their tasks must have
# run for a small part of that (waits excluded), not 300 or 600 ms.
expect_barrier_waits_excluded() {
    t0=$(time_of "$1" 0)
    for id in 1 2; do
        ti=$(time_of "$1" "$id")
        [ -n "$t0" ] && [ -n "$ti" ] || fail "$1: no time for task 0 or $id: $(cat "$tmp/$1.csv")"
        awk -v a="$t0" -v b="$ti" 'BEGIN { exit !(a >= 0.5 && b < 0.25 * a) }' ||
            fail "$1: task $id ran ${ti} s next to task 0's ${t0} s: barrier waits were counted"
    done
}

# Regions too short to pay for being tracked (PADDISER_RUN_REGION_COST_PCT):
# 40 instances of a region of a few us (omp_regions tiny), whose task calls
# and sync point cost more than 1% of it, are tracked for the first and 3
# more only; the 4 regions of 200 ms that follow stay tracked. 1%, not the
# default 10%: a loaded machine can stretch a region of a few us to a few
# ms now and then, but the runtime's calls stay above 1% of that, and far
# below 1% of 200 ms. Untracked after its 4th instance, it is tracked again
# at its 8th, 16th and 32nd to see whether it grew: 11 sync points in all.
# A try is one instance, which a loaded machine may stretch past 200 times
# its calls: then it is tracked again and dropped again 3 instances later,
# so up to 16 are allowed. With 0, every region is tracked.
expect_short_regions_untracked() {
    PADDISER_RUN_REGION_COST_PCT=1 run_pair tiny "$1" tiny 40
    grep -q '^tiny 40: s=269880 naps=12$' "$tmp/tiny.out" || fail "tiny: wrong result: $(cat "$tmp/tiny.out")"
    expect_tasks tiny "0 1 2 64 65 66"
    n=$(syncs_of tiny)
    [ "$n" -ge 11 ] && [ "$n" -le 16 ] || fail "tiny: $n sync points, expected 11 (16 at most): $(cat "$tmp/tiny.err")"
    grep -q '^paddiser run: region regions+0x[0-9a-f]*: 3 instance(s) of [0-9]* us, the runtime.s calls [0-9]* us each (more than PADDISER_RUN_REGION_COST_PCT=1%): untracked from now on$' "$tmp/tiny.err" ||
        fail "tiny: the short region was not reported untracked: $(cat "$tmp/tiny.err")"
    grep -q ' 1 region(s) untracked as too short, [01] tracked again$' "$tmp/tiny.err" || fail "tiny: summary: $(cat "$tmp/tiny.err")"
    PADDISER_RUN_REGION_COST_PCT=0 run_pair tiny_kept "$1" tiny 40
    expect_count tiny_kept "sync points" "$(syncs_of tiny_kept)" 44
}

# A region untracked while short is tracked again once it grows (omp_regions
# grows 6: 6 instances of a few us, then 6 of 300 ms, one region). Untracked
# after its 4th instance (its 6th on a loaded machine), it is tried again at
# its 8th (12th), 300 ms now: its calls are far under half of 1% of that, so
# it is tracked from then on: 4 + 1 + 4 = 9 sync points (6 + 1 = 7 loaded).
expect_grown_region_tracked_again() {
    PADDISER_RUN_REGION_COST_PCT=1 run_pair grows "$1" grows 6
    grep -q '^grows 6: s=63 naps=18$' "$tmp/grows.out" || fail "grows: wrong result: $(cat "$tmp/grows.out")"
    grep -q '^paddiser run: region regions+0x[0-9a-f]*: an instance of [0-9]* us, the runtime.s calls [0-9]* us (under half of PADDISER_RUN_REGION_COST_PCT=1%): tracked again$' "$tmp/grows.err" ||
        fail "grows: the grown region was not tracked again: $(cat "$tmp/grows.err")"
    grep -q ' 1 region(s) untracked as too short, 1 tracked again$' "$tmp/grows.err" || fail "grows: summary: $(cat "$tmp/grows.err")"
    n=$(syncs_of grows)
    [ "$n" -ge 7 ] || fail "grows: $n sync points, expected 7 - 9: $(cat "$tmp/grows.err")"
}
