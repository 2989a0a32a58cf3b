#!/bin/sh
# --resume takes a succeeded repetition's metrics from its status file
# (issue #13, item 6: they were read again from its output files on every
# resume, its parser run again): the parser ran once, when the repetition
# succeeded, and what it found then is what results.csv keeps, even if the
# output file changed since. A status file without metrics (a run from
# before they were recorded) is parsed once more.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-resume-metrics.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

cat >s.yaml <<EOF
benchmark: {name: rm, workdir: ./wd, repetitions: 1, parallel: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -eq 2 ] && [ -e $T/fail.flag ]; then exit 3; fi
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
R=wd/run_001
touch fail.flag
rc=0; "$PD" bench --results-layout short s.yaml -q >/dev/null 2>run.log || rc=$?
[ "$rc" -eq 1 ] || { cat run.log; fail "the run with a failing repetition should exit 1, got $rc"; }
# typed as IOPS records metrics: a number, not a string
grep -q '"v": 1$' $R/exec_0001/repetition_001/__iops_status.json ||
    fail "the succeeded repetition's status has no metrics: $(cat $R/exec_0001/repetition_001/__iops_status.json)"
# its output changes after it succeeded: a resume must not read it again
echo v=999 >$R/exec_0001/repetition_001/m.txt
rm fail.flag
"$PD" bench s.yaml --resume -q >/dev/null 2>res.log || { cat res.log; fail "resume failed"; }
grep -q '^exec_0001,1,1,1$' $R/results.csv || fail "exec_0001's metric was read again: $(cat $R/results.csv)"
grep -q '^exec_0002,1,2,2$' $R/results.csv || fail "exec_0002 after the resume: $(cat $R/results.csv)"
# __iops_status_rollup.json after the resume: complete, and every
# repetition as its status file holds it, the one the first invocation ran
# too (IOPS's find trusts a complete roll-up instead of the files)
if command -v python3 >/dev/null 2>&1; then
    python3 - "$R" <<'PY' || fail "status roll-up after the resume: $(cat $R/__iops_status_rollup.json)"
import json, os, sys
r = sys.argv[1]
d = json.load(open(os.path.join(r, "__iops_status_rollup.json")))
assert d["complete"] is True and d["benchmark"] == "rm" and d["repetitions"] == 1, d
assert sorted(d["executions"]) == ["exec_0001", "exec_0002"], d
for e, x in d["executions"].items():
    assert list(x["reps"]) == ["1"], x
    assert x["reps"]["1"] == json.load(open(os.path.join(r, e, "repetition_001", "__iops_status.json"))), e
    assert x["reps"]["1"]["status"] == "SUCCEEDED", x
PY
fi
# a status file without metrics (an older run, paddiser's lower-case
# status): still succeeded, parsed once more
printf '{"status": "succeeded", "exit_code": 0, "start": 1, "end": 2, "duration_s": 1, "executor": "local", "job_id": null}\n' >$R/exec_0002/repetition_001/__iops_status.json
echo v=7 >$R/exec_0002/repetition_001/m.txt
"$PD" bench s.yaml --resume -q >/dev/null 2>res2.log || { cat res2.log; fail "second resume failed"; }
grep -q '^exec_0002,1,2,7$' $R/results.csv || fail "a status without metrics is parsed again: $(cat $R/results.csv)"
echo "bench_resume_metrics: ok"
