#!/bin/sh
# IOPS interoperability (issue #15), against data IOPS 3.5.8 wrote
# (tests/fixtures/bench/iops_run, see its README):
# 1. `paddiser bench --summarize` and `paddiser report` read an IOPS run
#    directory, with its runs/ level and without it;
# 2. a directory that holds no run is an error naming it, non-zero;
# 3. IOPS's deprecated keys are accepted with IOPS's own warning texts;
# 4. a one-line inline parser_script is code, a path-like one a file;
# 5. the files for IOPS are not written through planted links;
# 6. results.csv: the flattened layout by default, --results-layout short
#    (with __iops_results.csv beside it), a resume keeping the layout.
# The schema of the files paddiser writes for IOPS's find and report is
# checked by tests/test_bench_iops_meta.c; IOPS's own tools run on a
# paddiser run in `make check-iops-interop IOPS_SRC=DIR`.
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
PD=$(cd "$BUILD" && pwd)/paddiser
FX=$(cd "$TESTS_DIR/fixtures/bench/iops_run" && pwd)
T=$(mktemp -d /tmp/pd-bench-iops-meta.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# 1. IOPS's run directory, as IOPS laid it out (runs/exec_NNNN) and with
# the executions moved up (the layout of the resource-sampling spec)
mkdir with_runs flat
cp -r "$FX/run_001" with_runs/
cp -r "$FX/run_001" flat/
mv flat/run_001/runs/exec_* flat/run_001/
rmdir flat/run_001/runs
for layout in with_runs flat; do
    R=$layout/run_001
    "$PD" bench --summarize "$R" >sum.out 2>sum.err || { cat sum.err; fail "$layout: --summarize failed"; }
    S=$R/__iops_resource_summary.csv
    [ -f "$S" ] || fail "$layout: no summary written"
    head -1 "$S" | grep -q '^execution_id,repetition,size_mib,threads,elements,' || fail "$layout: summary header: $(head -1 "$S")"
    # a row per repetition with a trace that has samples, variables from runs/exec_NNNN/__iops_params.json
    grep -q '^exec_0004,1,64,2,2796202,' "$S" || fail "$layout: exec_0004 rep 1 missing: $(cat "$S")"
    "$PD" report "$R" -o report.html >rep.out 2>rep.err || { cat rep.err; fail "$layout: report failed"; }
    # IOPS's flattened results.csv is read: its metrics are plotted, its
    # executions' variables come from the params files, statuses SUCCEEDED count
    grep -q 'bandwidth_mbs' report.html || fail "$layout: the report has no bandwidth_mbs"
    grep -q 'best_time_s' report.html || fail "$layout: the report has no best_time_s"
    if grep -q 'results.csv could not be read' report.html; then fail "$layout: results.csv not read"; fi
    if grep -q 'No exec_NNNN directories' report.html; then fail "$layout: executions not found"; fi
    grep -q 'exec_0004' report.html || fail "$layout: exec_0004 not in the report"
done

# 2. no run: an empty directory, and the workdir above a run
mkdir empty
rc=0; "$PD" bench --summarize empty 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "--summarize of an empty directory: exit $rc, want 2"
grep -q "empty holds no run: no exec_NNNN directory in it or in its runs/" err || fail "--summarize message: $(cat err)"
rc=0; "$PD" report empty 2>err || rc=$?
[ "$rc" -eq 1 ] || fail "report of an empty directory: exit $rc, want 1"
grep -q "empty holds no run" err || fail "report message: $(cat err)"
[ ! -e empty/report.html ] || fail "report wrote a page for an empty directory"
rc=0; "$PD" bench --summarize with_runs 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "--summarize of a workdir: exit $rc"
grep -q "pass a run directory: with_runs/run_001" err || fail "the workdir's runs are not named: $(cat err)"

# 3. deprecated keys: accepted, each with IOPS's text (IOPS 3.5.8's own
# output in deprecation_warnings.txt)
for f in deprecated deprecated_both; do
    "$PD" bench --dry-run --workdir "wd_$f" "$FX/$f.yaml" >"$f.out" 2>"$f.err" || { cat "$f.err"; fail "$f: refused"; }
    grep -q '^exec_0004' "$f.out" || fail "$f: executions not listed"
done
# the warnings' text after "file:line: key: "
sed -n 's/^paddiser bench: warning: \(.*\.yaml:[0-9]*: [a-z_.]*: \)\{0,1\}//p' deprecated.err deprecated_both.err >ours.txt
while IFS= read -r line; do
    grep -qxF "$line" ours.txt || fail "IOPS's warning line not given: '$line' (paddiser gave: $(cat ours.txt))"
done <"$FX/deprecation_warnings.txt"
# the old keys act as their new ones when there is no probes: section
grep -q 'benchmark.executor_options' deprecated.err || fail "executor_options warning"
if grep -q 'Deprecated probe fields found' deprecated_both.err; then fail "probes: wins over the old keys"; fi
cat >old.yaml <<'EOF'
benchmark:
  name: old
  workdir: ./wd_old
  executor: local
  trace_resources: false
  trace_interval: -1
  executor_options: {poll_interval: 0}
vars: {x: {type: int, sweep: {mode: list, values: [1]}}}
command: {template: "true"}
scripts: [{name: s, script_template: "#!/bin/bash\ntrue\n"}]
output: {sink: {type: csv}}
EOF
rc=0; "$PD" bench --dry-run old.yaml >/dev/null 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "bad values under the old keys should be refused: exit $rc"
grep -q 'old.yaml:6: benchmark.trace_interval: must be > 0' err || fail "trace_interval not checked: $(cat err)"
grep -q 'old.yaml:7: benchmark.executor_options.poll_interval: must be > 0' err ||
    fail "executor_options not read as slurm_options: $(cat err)"

# 4. parser_script: one line of code is code; a path must exist
study() {
    cat <<EOF
benchmark: {name: p, workdir: ./wd_p, executor: local}
vars: {x: {type: int, sweep: {mode: list, values: [1, 2]}}}
command: {template: "echo '{\"v\": {{ x }}}' > out.json"}
scripts:
  - name: s
    script_template: "#!/bin/bash\n{{ command.template }}\n"
    parser:
      file: out.json
      metrics: [{name: v}]
      parser_script: $1
output: {sink: {type: csv}}
EOF
}
study '"def parse(f): import json; return {\"v\": json.load(open(f))[\"v\"] * 10}"' >inline.yaml
"$PD" bench inline.yaml -q >/dev/null 2>err || { cat err; fail "the inline parser_script was refused"; }
grep -q 'def parse(f): import json' wd_p/run_001/__iops_parser.py || fail "the one line is not the parser"
if command -v python3 >/dev/null 2>&1; then
    # results.csv's default layout: ...,execution_id,repetition,...,vars.x,metadata.*,metrics.v
    grep -q '^p,,2,1,1,.*,2,SUCCEEDED,0,20$' wd_p/run_001/results.csv ||
        fail "the inline parser did not run: $(cat wd_p/run_001/results.csv)"
fi
study ./missing_parser.py >path.yaml
rc=0; "$PD" bench --dry-run path.yaml >/dev/null 2>err || rc=$?
[ "$rc" -eq 2 ] || fail "a missing parser file: exit $rc"
grep -q "appears to be a file path but the file was not found: './missing_parser.py'" err || fail "message: $(cat err)"
printf 'def parse(f):\n    return {"v": 5}\n' >my_parser.py
study my_parser.py >file.yaml
"$PD" bench --dry-run file.yaml >/dev/null 2>err || { cat err; fail "parser_script by file name"; }

# 5. the IOPS files are never written through a link planted in their place
# (__iops_results.csv: only beside a short results.csv; with the default
# layout a resume removes the name, and never writes through it)
R=wd_p/run_001
for f in __iops_index.json __iops_run_metadata.json __iops_results.csv; do
    echo untouched >"victim_$f"
    ln -sf "$T/victim_$f" "$R/$f"
done
"$PD" bench inline.yaml --resume -q >/dev/null 2>err || { cat err; fail "resume with planted links"; }
for f in __iops_index.json __iops_run_metadata.json __iops_results.csv; do
    [ "$(cat "victim_$f")" = untouched ] || fail "$f: written through the planted link"
done
for f in __iops_index.json __iops_run_metadata.json; do
    [ -f "$R/$f" ] && [ ! -L "$R/$f" ] || fail "$f: still a link"
done
[ ! -e "$R/__iops_results.csv" ] && [ ! -L "$R/__iops_results.csv" ] || fail "a stale __iops_results.csv was kept"
# and with the short layout, __iops_results.csv is written (not through a link)
"$PD" bench inline.yaml --results-layout short -q >/dev/null 2>err || { cat err; fail "short layout run"; }
R=wd_p/run_002
ln -sf "$T/victim___iops_results.csv" "$R/__iops_results.csv"
"$PD" bench inline.yaml --resume -q >/dev/null 2>err || { cat err; fail "resume of the short layout run"; }
[ "$(cat victim___iops_results.csv)" = untouched ] || fail "__iops_results.csv: written through the planted link"
[ -f "$R/__iops_results.csv" ] && [ ! -L "$R/__iops_results.csv" ] || fail "__iops_results.csv: still a link"
# the resume kept the short layout (read from the header); the option rewrites it
head -1 $R/results.csv | grep -qx 'execution_id,repetition,x,v' || fail "short layout not kept: $(head -1 $R/results.csv)"
grep -q '"path": "__iops_results.csv"' $R/__iops_run_metadata.json || fail "output.path of a short-layout run"
grep -q '^p,,2,1,1,.*,2,SUCCEEDED,0,20$' $R/__iops_results.csv || fail "__iops_results.csv: $(cat $R/__iops_results.csv)"
"$PD" bench inline.yaml --resume --results-layout iops -q >/dev/null 2>err || { cat err; fail "resume into the iops layout"; }
head -1 $R/results.csv | grep -q '^benchmark.name,benchmark.description,execution.execution_id,' ||
    fail "not rewritten in the iops layout: $(head -1 $R/results.csv)"
[ ! -e $R/__iops_results.csv ] || fail "__iops_results.csv kept beside a flattened results.csv"
grep -q '"path": "results.csv"' $R/__iops_run_metadata.json || fail "output.path of an iops-layout run"
# command.labels are IOPS's labels.* columns, between vars.* and metadata.*
sed 's/^command: {template: \(.*\)}$/command: {template: \1, labels: {team: "io, hpc", tier: fast}}/' inline.yaml >labels.yaml
grep -q 'labels: {team' labels.yaml || fail "labels.yaml not made"
"$PD" bench labels.yaml -q >/dev/null 2>err || { cat err; fail "labels run"; }
L=$(ls -d wd_p/run_* | tail -1)/results.csv
head -1 $L | grep -q ',vars.x,labels.team,labels.tier,metadata.executor_status,' || fail "labels header: $(head -1 $L)"
grep -q ',2,"io, hpc",fast,SUCCEEDED,0,20$' $L || fail "labels row: $(cat $L)"
rc=0; "$PD" bench inline.yaml --results-layout wide -q >/dev/null 2>err || rc=$?
[ "$rc" -eq 2 ] && grep -q "results-layout must be iops or short, not 'wide'" err || fail "bad layout: exit $rc, $(cat err)"
grep -q '"exec_0002"' $R/__iops_index.json || fail "the index was not rewritten"
echo "bench_iops_meta: ok"
