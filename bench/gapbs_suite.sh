#!/bin/sh
# The eight kernels of the GAP Benchmark Suite (github.com/sbeamer/gapbs,
# built here from a checkout you name; nothing of it is in this repository)
# under `paddiser run` with its default options, as a new user first runs
# them, against the same kernel alone. No --regions: every parallel region
# is tasks, so this is where regions of a few microseconds (tc's verifier:
# libstdc++'s parallel set_intersection) and regions of thousands of
# barriers (sssp's delta stepping) show what they cost. For each kernel:
# whether every trial verified, with and without the runtime; its first
# trial and the median of the later ones; the median verification time;
# the whole run's wall time; and how many regions the runtime left
# untracked as too short (PADDISER_RUN_REGION_COST_PCT), and how many of
# them were tracked again when a try found them grown. One run each way:
# a timing, not a test, and it never fails on the numbers.
#
#   bench/gapbs_suite.sh GAPBS_DIR
#   env: BUILD (default the repository's build), SCALE (-g, 18), TC_SCALE
#        (14: tc's verifier is quadratic), TRIALS (3), THREADS (2), FAST
#        (fast capacity, 16M), SAMPLER (mprotect: this machine has no PMU
#        load sampling), BACKEND (sim), CXX (g++), RUN_ARGS (more options
#        of `paddiser run`, e.g. "--region-cost 0")
#   The state before the cap and the region cost (2026-12-05):
#        PADDISER_SAMPLE_CAP_PCT=0 RUN_ARGS="--region-cost 0" bench/gapbs_suite.sh DIR
set -eu
NAME=gapbs_suite
GAPBS_DIR=${1:-}
[ -n "$GAPBS_DIR" ] && [ -f "$GAPBS_DIR/src/bfs.cc" ] || {
    echo "usage: bench/gapbs_suite.sh GAPBS_DIR (a checkout of github.com/sbeamer/gapbs)" >&2
    exit 2
}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SCALE=${SCALE:-18}
TC_SCALE=${TC_SCALE:-14}
TRIALS=${TRIALS:-3}
THREADS=${THREADS:-2}
FAST=${FAST:-16M}
SAMPLER=${SAMPLER:-mprotect}
BACKEND=${BACKEND:-sim}
CXX=${CXX:-g++}
RUN_ARGS=${RUN_ARGS:-}
. "$ROOT/bench/gapbs_common.sh"
need_tools "$CXX"

now() { date +%s.%N; }
# median of the numbers on stdin (none: -)
med() { awk "$MEDIAN"'{x[NR] = $1} END {if (!NR) print "-"; else print med(x, NR)}'; }
trials() { awk '/^Trial Time:/ {print $3}' "$1"; }
first() { trials "$1" | head -1; }
later() { trials "$1" | tail -n +2 | med; }
verif() { awk '/^Verification Time:/ {print $3}' "$1" | med; }
passed() { grep -c '^Verification: *PASS' "$1" || true; }

echo "gapbs_suite: $GAPBS_DIR ($(gapbs_rev)), -g $SCALE (tc -g $TC_SCALE), $TRIALS trials, $THREADS threads; paddiser run --backend $BACKEND --fast-capacity $FAST --sampler $SAMPLER $RUN_ARGS"
printf '%-8s %-9s %-22s %-22s %-20s %-18s %s\n' kernel "verified" "first trial s" "later trials s" "verification s" "run wall s" untracked
printf '%-8s %-9s %-22s %-22s %-20s %-18s %s\n' "" "alone/on" "alone / on" "alone / on" "alone / on" "alone / on" "regions"
for k in bc bfs cc cc_sv pr pr_spmv sssp tc; do
    # GAP's own flags (its Makefile)
    "$CXX" -std=c++11 -O3 -Wall -fopenmp "$GAPBS_DIR/src/$k.cc" -o "$T/$k"
    g=$SCALE
    [ "$k" = tc ] && g=$TC_SCALE
    t0=$(now)
    OMP_NUM_THREADS=$THREADS "$T/$k" -g "$g" -n "$TRIALS" -v >"$T/$k.off" 2>&1 || { cat "$T/$k.off" >&2; exit 1; }
    t1=$(now)
    # shellcheck disable=SC2086 # RUN_ARGS: several options
    OMP_NUM_THREADS=$THREADS PADDISER_RUN_VERBOSE=1 "$PADDISER" run --backend "$BACKEND" --fast-capacity "$FAST" \
        --sampler "$SAMPLER" $RUN_ARGS -- "$T/$k" -g "$g" -n "$TRIALS" -v >"$T/$k.on" 2>"$T/$k.err" ||
        { cat "$T/$k.err" >&2; exit 1; }
    t2=$(now)
    untracked=$(sed -n 's/.* \([0-9]*\) region(s) untracked as too short, \([0-9]*\) tracked again$/\1 (\2 again)/p' "$T/$k.err")
    printf '%-8s %-9s %-22s %-22s %-20s %-18s %s\n' "$k" "$(passed "$T/$k.off")/$(passed "$T/$k.on")" \
        "$(first "$T/$k.off") / $(first "$T/$k.on")" "$(later "$T/$k.off") / $(later "$T/$k.on")" \
        "$(verif "$T/$k.off") / $(verif "$T/$k.on")" \
        "$(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}') / $(echo "$t2 $t1" | awk '{printf "%.2f", $1 - $2}')" \
        "${untracked:-0}"
done
