#!/bin/sh
# The runtime on a third-party OpenMP program, unmodified (issue #11's
# setting: a graph kernel of a public benchmark suite, a sync point per
# iteration): PageRank of the GAP Benchmark Suite (github.com/sbeamer/gapbs,
# its src/pr.cc, built here from a checkout you name; nothing of it is in
# this repository) under `paddiser run`. Only the parallel region of
# PageRankPullGS's iteration loop is a task region (--regions), one sync
# point per region, so an instance is one PageRank iteration of one graph.
# For each graph scale (a Kronecker graph of 2^scale vertices that pr
# generates), RUNS runs of TRIALS trials, each run once under the runtime
# and once alone, interleaved. From each run's plan.log (one line per sync
# point: makespan_s, the predicted makespan of the next instance, and
# measured_s, the slowest task's time in the instance that ended) it
# prints, median over runs with their range:
#   (a) later instances: median |predicted / measured - 1| of the runtime,
#       of the naive previous-instance predictor, and their ratio;
#   (c) CV of the runtime's predictions once warmed up (after WARMUP
#       instances; GAP's trials rerun the same graph, so the input is
#       unchanged);
#   (e) bytes moved after warm-up;
#   (d) overhead: GAP's own "Average Time" of a trial under the runtime over
#       alone, minus 1 (each trial also runs the untracked setup region).
# A timing, not a test: it never fails on the numbers.
#
#   bench/gapbs_pr.sh GAPBS_DIR
#   env: BUILD (default the repository's build), SCALES (default "21 22"), TRIALS (8),
#        RUNS (3), THREADS (2), FAST (fast capacity, default 128M),
#        SAMPLER (mprotect: this machine has no PMU load sampling),
#        WARMUP (5), BACKEND (sim), CXX (g++),
#        KEEP (a folder: each run's output folder sSCALE-rRUN, its plan.log
#        and tasks.csv among them, and GAP's output on-/off-SCALE-RUN.txt
#        are copied there, for a look at the instances one by one)
set -eu
NAME=gapbs_pr
GAPBS_DIR=${1:-}
[ -n "$GAPBS_DIR" ] && [ -f "$GAPBS_DIR/src/pr.cc" ] || {
    echo "usage: bench/gapbs_pr.sh GAPBS_DIR (a checkout of github.com/sbeamer/gapbs: its src/pr.cc)" >&2
    exit 2
}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
SCALES=${SCALES:-"21 22"}
TRIALS=${TRIALS:-8}
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
FAST=${FAST:-128M}
SAMPLER=${SAMPLER:-mprotect}
WARMUP=${WARMUP:-5}
BACKEND=${BACKEND:-sim}
CXX=${CXX:-g++}
KEEP=${KEEP:-}
if [ -n "$KEEP" ]; then
    mkdir -p "$KEEP" && KEEP=$(cd "$KEEP" && pwd) || { echo "gapbs_pr: KEEP=$KEEP: cannot create it" >&2; exit 2; }
fi
. "$ROOT/bench/gapbs_common.sh"
need_tools "$CXX" nm addr2line

# GAP's own flags (its Makefile), plus -g for the region's source line.
"$CXX" -std=c++11 -O3 -g -Wall -fopenmp "$GAPBS_DIR/src/pr.cc" -o "$T/pr"

# The iteration loop's region: the outlined function of PageRankPullGS
# whose first instruction is on the line of its `reduction(+ : error)`
# pragma. Its name under the preload is pr+0x<offset> (a PIE: nm prints
# offsets).
line=$(grep -n 'reduction(+ *: *error)' "$GAPBS_DIR/src/pr.cc" | head -1 | cut -d: -f1)
region=
for off in $(nm "$T/pr" | awk '/PageRankPullGS.*_omp_fn/ {print $1}'); do
    at=$(addr2line -e "$T/pr" "0x$off" | sed 's/.*://; s/ .*//')
    [ "$at" = "$line" ] && region="pr+0x$(echo "$off" | sed 's/^0*//')"
done
[ -n "$region" ] || { echo "gapbs_pr: no outlined region of PageRankPullGS at pr.cc:$line" >&2; exit 1; }
echo "gapbs_pr: $GAPBS_DIR/src/pr.cc ($(gapbs_rev)), region $region (pr.cc:$line), $THREADS threads, $TRIALS trials a run, $RUNS runs a scale, backend $BACKEND, fast capacity $FAST, sampler $SAMPLER"

avg_time() { awk '/^Average Time:/ {print $3}' "$1"; }
# Minor page faults of each arm (GNU time, Debian package "time", where
# installed), 11 - 24 us a fault on this project's VM: glibc's heap
# trimming once gave GAP's per-trial arrays fresh pages under the runtime
# and not alone (docs/runtime-measurements.md, *The heap under the
# runtime*); now paddiser run keeps freed tracked blocks for the next
# trial (*Freed blocks kept for reuse*; PADDISER_RUN_KEEP_FREED=0 in the
# environment: the old behaviour).
timed() { # FAULTS_FILE CMD...
    f=$1
    shift
    if [ -x /usr/bin/time ]; then /usr/bin/time -f %R -o "$f" "$@"; else echo - >"$f"; "$@"; fi
}

for scale in $SCALES; do
    for r in $(seq 1 "$RUNS"); do
        out="$T/s$scale-r$r"
        # Alternating order (under the runtime first in odd runs, alone
        # first in even ones), so that what a run leaves behind (freed
        # memory the kernel still reclaims, page cache) favours neither.
        [ $((r % 2)) -eq 0 ] && OMP_NUM_THREADS=$THREADS timed "$T/off-$scale-$r.flt" "$T/pr" -g "$scale" -n "$TRIALS" >"$T/off-$scale-$r.txt"
        OMP_NUM_THREADS=$THREADS timed "$T/on-$scale-$r.flt" "$PADDISER" run --backend "$BACKEND" --fast-capacity "$FAST" \
            --sampler "$SAMPLER" --regions "$region" --out "$out" -- \
            "$T/pr" -g "$scale" -n "$TRIALS" >"$T/on-$scale-$r.txt" 2>"$T/on-$scale-$r.err" ||
            { cat "$T/on-$scale-$r.err" >&2; exit 1; }
        [ $((r % 2)) -eq 1 ] && OMP_NUM_THREADS=$THREADS timed "$T/off-$scale-$r.flt" "$T/pr" -g "$scale" -n "$TRIALS" >"$T/off-$scale-$r.txt"
        echo "gapbs_pr: scale $scale run $r: trial $(avg_time "$T/on-$scale-$r.txt") s under the runtime, $(avg_time "$T/off-$scale-$r.txt") s alone, $(wc -l <"$out/plan.log") sync points, minor page faults $(tail -1 "$T/on-$scale-$r.flt") under the runtime, $(tail -1 "$T/off-$scale-$r.flt") alone"
    done
done

# Per run: one line of statistics; then medians and ranges over runs.
stats_of_run() { # plan.log on.txt off.txt
    awk -v warmup="$WARMUP" -v on="$(avg_time "$2")" -v off="$(avg_time "$3")" "$MEDIAN"'
        function abs(x) { return x < 0 ? -x : x }
        {
            for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            n++; pred[n] = v["makespan_s"] + 0; meas[n] = v["measured_s"] + 0; moved[n] = v["moved_bytes"] + 0
        }
        END {
            ne = 0; s = 0; s2 = 0; nc = 0; mv = 0
            for (i = 2; i <= n; i++) {
                if (!(meas[i] > 0) || !(pred[i - 1] > 0) || !(meas[i - 1] > 0)) continue
                ne++; er[ne] = abs(pred[i - 1] / meas[i] - 1); en[ne] = abs(meas[i - 1] / meas[i] - 1)
            }
            for (i = warmup; i < n; i++) { nc++; s += pred[i]; s2 += pred[i] * pred[i]; mv += moved[i] }
            cv = nc > 1 ? sqrt((s2 - s * s / nc) / (nc - 1)) / (s / nc) : 0
            mr = med(er, ne); mn = med(en, ne)
            printf "%.4f %.4f %.4f %.4f %.0f %.4f %d\n", 100 * mr, 100 * mn, (mn > 0 ? mr / mn : 0), 100 * cv, mv, 100 * (on / off - 1), n
        }' "$1"
}
summary() { # column label unit
    awk -v c="$1" -v label="$2" -v unit="$3" "$MEDIAN"'
        { x[NR] = $c }
        END {
            m = med(x, NR)
            printf "  %-52s %10.2f%s  %8.2f .. %.2f\n", label, m, unit, x[1], x[NR]
        }'
}
for scale in $SCALES; do
    : >"$T/stats-$scale"
    for r in $(seq 1 "$RUNS"); do
        stats_of_run "$T/s$scale-r$r/plan.log" "$T/on-$scale-$r.txt" "$T/off-$scale-$r.txt" >>"$T/stats-$scale"
    done
    inst=$(awk '{print $7}' "$T/stats-$scale" | sort -n | head -1)
    ms=$(for r in $(seq 1 "$RUNS"); do awk '{for (i = 1; i <= NF; i++) if ($i ~ /^measured_s=/) print substr($i, 12)}' "$T/s$scale-r$r/plan.log"; done |
        awk "$MEDIAN"'{x[NR] = $1} END {printf "%.1f", 1000 * med(x, NR)}')
    echo
    echo "scale $scale: $inst or more instances a run, median instance $ms ms (slowest task); median over $RUNS runs, range"
    summary 1 "(a) later instances, median |error|: runtime" "%" <"$T/stats-$scale"
    summary 2 "    naive previous-instance predictor" "%" <"$T/stats-$scale"
    summary 3 "    runtime / naive" " " <"$T/stats-$scale"
    summary 4 "(c) CV of predictions after $WARMUP instances" "%" <"$T/stats-$scale"
    summary 5 "(e) bytes moved after $WARMUP instances" " " <"$T/stats-$scale"
    summary 6 "(d) trial time under the runtime / alone - 1" "%" <"$T/stats-$scale"
    if [ -x /usr/bin/time ]; then
        for r in $(seq 1 "$RUNS"); do
            echo "$(tail -1 "$T/on-$scale-$r.flt") $(tail -1 "$T/off-$scale-$r.flt")"
        done | awk -v trials="$TRIALS" '{ print ($1 - $2) / trials }' |
            summary 1 "    minor page faults a trial, under the runtime - alone" " "
    fi
done
if [ -n "$KEEP" ]; then
    for scale in $SCALES; do
        for r in $(seq 1 "$RUNS"); do
            cp -r "$T/s$scale-r$r" "$KEEP/" && cp "$T/on-$scale-$r.txt" "$T/off-$scale-$r.txt" "$T/on-$scale-$r.flt" "$T/off-$scale-$r.flt" "$KEEP/"
        done
    done
    echo "gapbs_pr: kept in $KEEP"
fi
