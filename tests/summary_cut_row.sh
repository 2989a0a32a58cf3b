#!/bin/sh
# A trace row cut short by a failed write (no line end) is not a sample
# (issue #13, item 5): cut inside its last field, mem_available_kb "1" made
# the memory peak 16 GB. The summary and the report of a run whose traces
# end in such a row equal those of the run without it.
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
PD=$(cd "$BUILD" && pwd)/paddiser
FX=$(cd "$TESTS_DIR" && pwd)/fixtures/report/run_001
T=$(mktemp -d /tmp/pd-cut-row.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$T/a" "$T/b"
cp -R "$FX" "$T/a/run_001"
cp -R "$FX" "$T/b/run_001"
W=$T/a/run_001
C=$T/b/run_001
"$PD" bench --summarize "$W" >/dev/null 2>&1 || fail "summarize whole"
n=0
for f in "$C"/exec_*/repetition_*/__iops_trace_*.csv; do
    # the last sample's timestamp plus one, and a memory field cut after one digit
    last=$(tail -n 1 "$f" | cut -d, -f1)
    printf '%s,node01,0,50.0,1.0,49.0,16777216,1' "$(awk -v t="$last" 'BEGIN { printf "%.1f", t + 1 }')" >>"$f"
    n=$((n + 1))
done
[ $n -gt 0 ] || fail "no trace in the fixture"
"$PD" bench --summarize "$C" >/dev/null 2>&1 || fail "summarize cut"
cmp "$W/__iops_resource_summary.csv" "$C/__iops_resource_summary.csv" >&2 ||
    fail "a cut last row changed the summary: $(diff "$W/__iops_resource_summary.csv" "$C/__iops_resource_summary.csv" | head -n 4)"
"$PD" report "$W" -o "$T/whole.html" >/dev/null 2>&1 || fail "report whole"
"$PD" report "$C" -o "$T/cut.html" >/dev/null 2>&1 || fail "report cut"
# the report names its run directory; apart from that, the same
sed "s|$C|RUN|g" "$T/cut.html" >"$T/c.html"
sed "s|$W|RUN|g" "$T/whole.html" >"$T/w.html"
cmp -s "$T/w.html" "$T/c.html" || fail "a cut last row changed the report: $(diff "$T/w.html" "$T/c.html" | head -n 4)"
echo "summary_cut_row: ok ($n traces)"
