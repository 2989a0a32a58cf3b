#!/bin/sh
# The README demo (`make demo`): builds the STREAM-triad kernel and runs the
# examples/membw study locally, with CPU/memory resource sampling on, then
# says where the results, the run summary and the report are.
set -eu
BUILD=${BUILD:-build}
WORKDIR=${DEMO_WORKDIR:-$BUILD/demo}
${MAKE:-make} -s --no-print-directory "$BUILD/membw-triad" >/dev/null
export MEMBW_BIN="$(cd "$BUILD" && pwd)/membw-triad"
echo "== paddiser bench examples/membw/membw.yaml (workdir $WORKDIR)"
rc=0
"$BUILD/paddiser" bench examples/membw/membw.yaml --workdir "$WORKDIR" || rc=$?
run=$(ls -d "$WORKDIR"/run_[0-9]* 2>/dev/null | sort | tail -n 1)
if [ -n "$run" ] && [ -f "$run/results.csv" ]; then
    echo
    echo "== $run/results.csv"
    column -s, -t <"$run/results.csv" 2>/dev/null || cat "$run/results.csv"
    echo
    echo "results: $run/results.csv"
    if [ -f "$run/__iops_resource_summary.csv" ]; then echo "summary: $run/__iops_resource_summary.csv"; else echo "summary: (none written)"; fi
    if [ -f "$run/report.html" ]; then echo "report:  $run/report.html"; else echo "report:  (none written)"; fi
fi
# The placement side: the four task-parallel kernels profiled here, placed on a
# simulated DRAM + Optane machine by each policy (docs/sim.md). First as a
# bench study (examples/sim_study.yaml, its demo slice: 16 executions), whose
# report has each policy's per-task makespan bars; then the gains table.
echo
echo "== paddiser bench examples/sim_study.yaml --machine demo (workdir $WORKDIR/placement)"
PADDISER_BIN="$(cd "$BUILD" && pwd)/paddiser" "$BUILD/paddiser" bench examples/sim_study.yaml --machine demo \
    --workdir "$WORKDIR/placement" -q || rc=$?
prun=$(ls -d "$WORKDIR/placement"/run_[0-9]* 2>/dev/null | sort | tail -n 1)
if [ -n "$prun" ] && [ -f "$prun/results.csv" ]; then
    # workload, planner, capacity and the chosen policy's makespan and gains
    # (sorted by workload, capacity, planner)
    { head -n 1 "$prun/results.csv"; tail -n +2 "$prun/results.csv" | sort -t, -k3,3 -k5,5n -k4,4; } |
        cut -d, -f3-5,7,10-12 | { column -s, -t 2>/dev/null || cat; }
    if [ -f "$prun/report.html" ]; then
        echo "placement report: $prun/report.html (per-task makespan bars of every policy, $(wc -c <"$prun/report.html" | tr -d ' ') bytes)"
    fi
fi
echo
echo "== paddiser sim study --quick (load-balanced placement vs baselines)"
"$BUILD/paddiser" sim study --quick -o "$WORKDIR/placement.md" || rc=$?
if [ -f "$WORKDIR/placement.md" ]; then
    sed -n '/^## optane/,/^Over all/p' "$WORKDIR/placement.md"
    echo "placement study: $WORKDIR/placement.md"
fi
exit $rc
