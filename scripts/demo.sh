#!/bin/sh
# The README demo (`make demo`): builds the STREAM-triad kernel and runs the
# examples/membw study locally, with CPU/memory resource sampling on, then
# says where the results, the run summary and the report are.
set -eu
BUILD=${BUILD:-build}
WORKDIR=${DEMO_WORKDIR:-$BUILD/demo}
${MAKE:-make} -s --no-print-directory "$BUILD/membw-triad" >/dev/null
# csv_columns FILE NAME,NAME,...: those columns of a results.csv (quoted
# fields allowed; either layout), each header without its "vars." or
# "metrics." prefix. awk, not python3: a fresh Debian has no python3.
csv_columns() {
    awk -v want="$2" '
    function fields(line, f,   n, i, c, q, cur) {
        n = 0; cur = ""; q = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (q) {
                if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
                else if (c == "\"") q = 0
                else cur = cur c
            } else if (c == "\"") q = 1
            else if (c == ",") { f[++n] = cur; cur = "" }
            else cur = cur c
        }
        f[++n] = cur
        return n
    }
    NR == 1 {
        n = fields($0, h); m = split(want, w, ",")
        for (j = 1; j <= m; j++) for (i = 1; i <= n; i++) if (h[i] == w[j]) at[j] = i
        out = ""
        for (j = 1; j <= m; j++) { name = w[j]; sub(/^[a-z]+\./, "", name); out = out (j > 1 ? "," : "") name }
        print out; next
    }
    { fields($0, f); out = ""; for (j = 1; j <= m; j++) out = out (j > 1 ? "," : "") (at[j] ? f[at[j]] : ""); print out }
    ' "$1"
}
export MEMBW_BIN="$(cd "$BUILD" && pwd)/membw-triad"
echo "== paddiser bench examples/membw/membw.yaml (workdir $WORKDIR)"
rc=0
"$BUILD/paddiser" bench examples/membw/membw.yaml --workdir "$WORKDIR" || rc=$?
run=$(ls -d "$WORKDIR"/run_[0-9]* 2>/dev/null | sort | tail -n 1)
if [ -n "$run" ] && [ -f "$run/results.csv" ]; then
    echo
    echo "== $run/results.csv"
    csv_columns "$run/results.csv" \
        execution.execution_id,execution.repetition,vars.size_mib,vars.threads,metrics.bandwidth_mbs,metrics.best_time_s |
        { column -s, -t 2>/dev/null || cat; }
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
    csv_columns "$prun/results.csv" vars.workload,vars.policy,vars.capacity_pct,metrics.makespan_s,metrics.gain_vs_first_touch,metrics.gain_vs_hot_first,metrics.gain_vs_memory_mode >"$prun/.demo_table"
    { head -n 1 "$prun/.demo_table"; tail -n +2 "$prun/.demo_table" | sort -t, -k1,1 -k3,3n -k2,2; } |
        { column -s, -t 2>/dev/null || cat; }
    rm -f "$prun/.demo_table"
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
