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
# simulated DRAM + Optane machine by each policy (docs/sim.md).
echo
echo "== paddiser sim study --quick (load-balanced placement vs baselines)"
"$BUILD/paddiser" sim study --quick -o "$WORKDIR/placement.md" || rc=$?
if [ -f "$WORKDIR/placement.md" ]; then
    sed -n '/^## optane/,/^### /p' "$WORKDIR/placement.md" | sed '$d'
    echo "placement study: $WORKDIR/placement.md"
fi
exit $rc
