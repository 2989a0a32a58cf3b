#!/bin/sh
# A bool variable in __iops_params.json and __iops_index.json is JSON
# true/false, as IOPS 3.5.8 writes it (planner.py's _write_params_file:
# json.dump of the params dict); results.csv keeps "True"/"False". --resume
# still accepts a run directory written before, with "True"/"False" strings,
# and still refuses variables that changed (issue #15).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-bool-params.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

cat >s.yaml <<'YAML'
benchmark: {name: bp, workdir: ./wd, repetitions: 1, parallel: 1}
vars:
  flag: {type: bool, sweep: {mode: list, values: [true, false]}}
command: {template: "echo v=1"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
YAML
R=wd/run_001
"$PD" bench --results-layout short s.yaml -q >/dev/null 2>run.log || { cat run.log; fail "paddiser bench"; }
[ "$(cat $R/exec_0001/__iops_params.json)" = '{"flag": true}' ] ||
    fail "exec_0001 params: $(cat $R/exec_0001/__iops_params.json)"
[ "$(cat $R/exec_0002/__iops_params.json)" = '{"flag": false}' ] ||
    fail "exec_0002 params: $(cat $R/exec_0002/__iops_params.json)"
tr -d ' \n' <$R/__iops_index.json >index.txt
grep -q '"exec_0001":{"path":"exec_0001","params":{"flag":true}' index.txt || fail "index: $(cat index.txt)"
grep -q '"exec_0002":{"path":"exec_0002","params":{"flag":false}' index.txt || fail "index: $(cat index.txt)"
grep -q '^exec_0001,1,True,1$' $R/results.csv || fail "results.csv: $(cat $R/results.csv)"
grep -q '^exec_0002,1,False,1$' $R/results.csv || fail "results.csv: $(cat $R/results.csv)"

# a run directory from before: "True"/"False" strings, one repetition to redo
echo '{"flag": "True"}' >$R/exec_0001/__iops_params.json
echo '{"flag": "False"}' >$R/exec_0002/__iops_params.json
rm -rf $R/exec_0002/repetition_001
"$PD" bench s.yaml --resume -q >/dev/null 2>res.log || { cat res.log; fail "resume of a run with True/False strings"; }
grep -q '^exec_0002,1,False,1$' $R/results.csv || fail "results.csv after the resume: $(cat $R/results.csv)"

# a variable that changed is still refused, in either form
echo '{"flag": "False"}' >$R/exec_0001/__iops_params.json
rc=0; "$PD" bench s.yaml --resume -q >/dev/null 2>res2.log || rc=$?
[ "$rc" -ne 0 ] || fail "a resume with exec_0001's flag changed should fail"
grep -q "exec_0001's variables changed" res2.log || fail "no message naming the change: $(cat res2.log)"
echo '{"flag": false}' >$R/exec_0001/__iops_params.json
rc=0; "$PD" bench s.yaml --resume -q >/dev/null 2>res3.log || rc=$?
[ "$rc" -ne 0 ] || fail "a resume with exec_0001's flag changed (JSON false) should fail"
echo "bench_iops_bool_params: ok"
