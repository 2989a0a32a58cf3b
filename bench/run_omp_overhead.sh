#!/bin/sh
# Overhead of `paddiser run` on OpenMP programs (issue #14's target: at most
# 3 %, median of at least 10 runs, on parallel regions of 50 ms or more).
# Builds bench/run_omp_kernel.c with gcc -fopenmp (libgomp: the GOMP_* hooks)
# and, when clang -fopenmp links, with clang (libomp: the OMPT tool), then
# runs each RUNS times in three ways, interleaved run by run so that a
# change in the machine's load hits all three alike:
#   plain      the program alone
#   sampling   under libpaddiser-preload.so (default runtime: page sampling on)
#   nosampling the same with PADDISER_SAMPLING=off
# and prints per build and way the median of the program's timed loop
# (regions plus the sync points between them) and of its CPU time (all
# threads; OMP_WAIT_POLICY=passive so that waiting threads sleep instead of
# spinning: the CPU time is then the work plus the preload's, which other
# load on the machine disturbs less than the loop's length), each with its
# overhead against plain; for the two preloaded ways also the median share
# of the loop the preload itself accounts for (its PADDISER_RUN_VERBOSE
# summary at exit: sync points, plus task begin/end calls divided by the
# threads), which the machine's other load shifts least. A timing, not a
# test: it never fails on the numbers.
#
#   bench/run_omp_overhead.sh [RUNS [MB [PASSES [ROUNDS]]]]   defaults 10 64 16 10
#   env: BUILD (default build), PADDISER_BACKEND etc. pass through,
#        RUN_OMP_SYNC_EVERY (PADDISER_RUN_SYNC_EVERY, default 1)
set -eu
export OMP_WAIT_POLICY=passive
BUILD=${BUILD:-build}
RUNS=${1:-10}
MB=${2:-64}
PASSES=${3:-16}
ROUNDS=${4:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PRELOAD=$(cd "$BUILD" && pwd)/libpaddiser-preload.so
[ -f "$PRELOAD" ] || { echo "run_omp_overhead: $PRELOAD missing (make all)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

builds="gcc"
gcc -O2 -fopenmp -o "$T/kernel_gcc" "$ROOT/bench/run_omp_kernel.c"
if command -v clang >/dev/null 2>&1 && clang -O2 -fopenmp -o "$T/kernel_clang" "$ROOT/bench/run_omp_kernel.c" 2>/dev/null; then
    builds="gcc clang"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "run_omp_overhead: $RUNS runs per way, $MB MiB arrays, $PASSES passes, $ROUNDS rounds of 2 regions," \
    "sync every ${RUN_OMP_SYNC_EVERY:-1} region(s), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in $builds; do
    for i in $(seq "$RUNS"); do
        "$T/kernel_$b" "$MB" "$PASSES" "$ROUNDS" >>"$T/$b.plain"
        for w in sampling nosampling; do
            s=on
            [ "$w" = sampling ] || s=off
            PADDISER_QUIET=1 PADDISER_SAMPLING=$s PADDISER_RUN_VERBOSE=1 \
                PADDISER_RUN_SYNC_EVERY=${RUN_OMP_SYNC_EVERY:-1} LD_PRELOAD="$PRELOAD" \
                "$T/kernel_$b" "$MB" "$PASSES" "$ROUNDS" >"$T/out" 2>"$T/err"
            cat "$T/out" >>"$T/$b.$w"
            # The preload's own account (its summary at exit): seconds in
            # sync points plus task calls per thread, over the loop's length.
            awk -v loop="$(awk '{ print $2 }' "$T/out")" -v thr="$(awk '{ print $10 }' "$T/out")" '
                / sync point\(s\) in / { for (i = 1; i <= NF; i++) { if ($i == "in" && $(i - 1) ~ /point/) s = $(i + 1)
                                                                  if ($i == "in" && $(i - 1) ~ /call/) c = $(i + 1) } }
                END { print 100 * (s + c / thr) / loop }' "$T/err" >>"$T/$b.$w.share"
        done
    done
    for w in plain sampling nosampling; do
        [ "$(awk '{ print $NF }' "$T/$b.$w" | sort -u | wc -l)" -eq 1 ] &&
            [ "$(awk '{ print $NF }' "$T/$b.$w" | sort -u)" = "$(awk '{ print $NF }' "$T/$b.plain" | sort -u)" ] ||
            { echo "run_omp_overhead: $b $w: checksums differ" >&2; exit 1; }
    done
    base=$(awk '{ print $2 }' "$T/$b.plain" | median)
    minr=$(awk '{ print $4 }' "$T/$b.plain" | sort -g | head -n 1)
    medr=$(awk '{ print $6 }' "$T/$b.plain" | median)
    printf '%-6s regions: shortest %s ms, median %s ms\n' "$b" "$minr" "$medr"
    cbase=$(awk '{ print $12 }' "$T/$b.plain" | median)
    for w in plain sampling nosampling; do
        m=$(awk '{ print $2 }' "$T/$b.$w" | median)
        lo=$(awk '{ print $2 }' "$T/$b.$w" | sort -g | head -n 1)
        hi=$(awk '{ print $2 }' "$T/$b.$w" | sort -g | tail -n 1)
        c=$(awk '{ print $12 }' "$T/$b.$w" | median)
        share=""
        [ -f "$T/$b.$w.share" ] && share=$(printf '   in the runtime %.2f %% of the loop' "$(median <"$T/$b.$w.share")")
        printf '%-6s %-10s loop median %.4f s (min %.4f, max %.4f) %+.2f %%   cpu median %.4f s %+.2f %%%s\n' \
            "$b" "$w" "$m" "$lo" "$hi" "$(awk -v m="$m" -v b="$base" 'BEGIN { print 100 * (m / b - 1) }')" \
            "$c" "$(awk -v m="$c" -v b="$cbase" 'BEGIN { print 100 * (m / b - 1) }')" "$share"
    done
done
