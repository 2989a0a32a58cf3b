#!/bin/sh
# paddiser bench end to end with the local executor: run directory layout,
# results.csv / __iops_params.json / __iops_status.json contents, failures,
# configuration errors (nothing run), dry run, Ctrl-C and --resume.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-local.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/study.yaml" <<'EOF'
benchmark:
  name: tiny
  workdir: ./wd
  repetitions: 2
  parallel: 2
vars:
  x:
    type: int
    sweep: {mode: list, values: [1, 2, 3]}
  mode:
    type: str
    sweep: {mode: list, values: [a, "b c"]}
  y:
    type: float
    expr: "x / 2"
constraints:
  - name: no-3b
    rule: "not (x == 3 and mode == 'b c')"
command:
  template: "printf 'score=%s\\nlabel=%s\\n' {{ x * 10 }} '{{ mode | upper }}'"
scripts:
  - name: tiny
    script_template: |
      #!/bin/bash
      echo run >> {{ workdir }}/count_{{ execution_id }}_{{ repetition }}
      {{ command.template }} > {{ execution_dir }}/out.txt
      echo "stderr line" >&2
      printf 'timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb\n1.0,h,0,50,10,40,2000,1000\n2.0,h,0,30,10,60,2000,500\n' > {{ execution_dir }}/__iops_trace_h_1.csv
      [ {{ x }} -ne 2 ] || [ "{{ mode }}" != a ] || exit 3
    parser:
      file: out.txt
      metrics:
        - name: score
        - name: label
EOF
cd "$T"

# 1. a run with one failing execution: exit status 1, layout and files
rc=0; "$PD" bench --results-layout short study.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "expected exit 1 (one execution fails), got $rc"; }
R=wd/run_001
[ -d "$R/exec_0005/repetition_002" ] || fail "layout: exec_0005/repetition_002 missing"
[ ! -e "$R/exec_0006" ] || fail "constraint should have removed (3, 'b c')"
[ -f "$R/__iops_config.yaml" ] || fail "__iops_config.yaml missing"
cmp -s study.yaml "$R/__iops_config.yaml" || fail "__iops_config.yaml differs from the config"
[ "$(cat "$R/exec_0002/__iops_params.json")" = '{"x": 1, "mode": "b c", "y": 0.5}' ] ||
    fail "params.json: $(cat "$R/exec_0002/__iops_params.json")"
grep -q '"status": "FAILED"' "$R/exec_0003/repetition_001/__iops_status.json" || fail "exec_0003 should be failed"
grep -q '"exit_code": 3' "$R/exec_0003/repetition_001/__iops_status.json" || fail "exit code 3 not recorded"
grep -q '"executor": "local"' "$R/exec_0001/repetition_001/__iops_status.json" || fail "executor missing"
grep -q '"job_id": null' "$R/exec_0001/repetition_001/__iops_status.json" || fail "job_id should be null"
grep -q '"duration_s": [0-9]' "$R/exec_0001/repetition_001/__iops_status.json" || fail "duration_s missing"
grep -q 'stderr line' "$R/exec_0001/repetition_001/stderr" || fail "stderr not captured"
[ -x "$R/exec_0001/repetition_001/run_tiny.sh" ] || fail "run_tiny.sh missing"
head -1 "$R/exec_0001/repetition_001/run_tiny.sh" | grep -q '^#!/bin/bash' || fail "shebang not first"
# rows in run order: IOPS's shuffled order for the default random_seed 42
cat >expected.csv <<'EOF'
execution_id,repetition,x,mode,y,score,label
exec_0005,1,3,a,1.5,30,A
exec_0005,2,3,a,1.5,30,A
exec_0001,1,1,a,0.5,10,A
exec_0001,2,1,a,0.5,10,A
exec_0004,1,2,b c,1.0,20,B C
exec_0002,1,1,b c,0.5,10,B C
exec_0002,2,1,b c,0.5,10,B C
exec_0004,2,2,b c,1.0,20,B C
EOF
diff expected.csv "$R/results.csv" >&2 || fail "results.csv differs"
grep -q "summary: $PWD/$R/__iops_resource_summary.csv" out.log || { cat out.log err.log; fail "summary not reported"; }
head -1 "$R/__iops_resource_summary.csv" | grep -q '^execution_id,repetition,x,mode,y,' || fail "summary header"
[ "$(tail -n +2 "$R/__iops_resource_summary.csv" | wc -l)" -eq 10 ] || fail "summary rows"

# 2. configuration errors: exit 2, a message with file:line: key, no run dir
sed 's/rule: "not (x == 3/rule: "not (xx == 3/' study.yaml >bad.yaml
rc=0; "$PD" bench bad.yaml -q 2>err.log || rc=$?
[ "$rc" -eq 2 ] || fail "config error should exit 2, got $rc"
grep -q "bad.yaml:18: constraints\[0\].rule: unknown name 'xx'" err.log || { cat err.log; fail "error message"; }
[ ! -e wd/run_002 ] || fail "a config error must not leave a run directory"
rc=0; "$PD" bench missing.yaml 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q "missing.yaml: cannot read" err.log || fail "missing config"

# 3. dry run: lists the executions, creates nothing
"$PD" bench study.yaml --dry-run >dry.log
grep -q "5 executions x 2 repetitions" dry.log || fail "dry run summary: $(cat dry.log)"
grep -q "exec_0004: x=2 mode=b c y=1.0" dry.log || fail "dry run listing"
[ ! -e wd/run_002 ] || fail "dry run created a run directory"

# 4. Ctrl-C cancels, --resume finishes without redoing succeeded repetitions
cat >slow.yaml <<'EOF'
benchmark: {name: slow, workdir: ./wd2, repetitions: 1, parallel: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      echo run >> {{ workdir }}/count_{{ execution_id }}
      if [ {{ x }} -eq 2 ] && [ -e {{ workdir }}/../../slow.flag ]; then sleep 30; fi
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
touch slow.flag
"$PD" bench --results-layout short slow.yaml -q >/dev/null 2>int.log &
pid=$!
i=0
# wait until the script itself has started (its first line ran), not only its status
until grep -qs '"status": "RUNNING"' wd2/run_001/exec_0002/repetition_001/__iops_status.json &&
    [ -s wd2/run_001/count_2 ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "exec_0002 never started"; sleep 0.05
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat int.log; fail "interrupted run should exit 130, got $rc"; }
grep -q '"status": "CANCELLED"' wd2/run_001/exec_0002/repetition_001/__iops_status.json || fail "not cancelled"
grep -q '"status": "PENDING"' wd2/run_001/exec_0003/repetition_001/__iops_status.json || fail "exec_0003 should be pending"
grep -q "resume with: paddiser bench slow.yaml --resume" int.log || fail "no resume hint"
rm slow.flag
"$PD" bench slow.yaml --resume -q >/dev/null 2>res.log || { cat res.log; fail "resume failed"; }
[ "$(wc -l <wd2/run_001/count_1)" -eq 1 ] || fail "exec_0001 was redone on resume"
[ -f wd2/run_001/exec_0002/repetition_001/previous_attempt_1/stdout ] || fail "cancelled attempt's output not set aside"
[ ! -e wd2/run_001/exec_0003/repetition_001/previous_attempt_1 ] || fail "a never-run repetition has no previous attempt"
[ "$(wc -l <wd2/run_001/count_2)" -eq 2 ] || fail "exec_0002 should have run twice"
[ "$(wc -l <wd2/run_001/count_3)" -eq 1 ] || fail "exec_0003 should have run once"
# run order for random_seed 42: 2, 1, 3 (IOPS's shuffle)
printf 'execution_id,repetition,x,v\nexec_0002,1,2,2\nexec_0001,1,1,1\nexec_0003,1,3,3\n' >exp2.csv
diff exp2.csv wd2/run_001/results.csv >&2 || fail "results after resume"
[ ! -e wd2/run_002 ] || fail "resume created a new run directory"
# resuming with a changed sweep is refused
sed 's/values: \[1, 2, 3\]/values: [1, 5, 3]/' slow.yaml >changed.yaml
sed -i 's/workdir: .\/wd2/workdir: .\/wd2/' changed.yaml
rc=0; "$PD" bench changed.yaml --resume wd2/run_001 -q 2>chg.log || rc=$?
[ "$rc" -ne 0 ] && grep -q "variables changed" chg.log || fail "changed config accepted on resume"

# 5. a second run takes the next number; --workdir/--parallel overrides
"$PD" bench slow.yaml -q --parallel 3 >/dev/null 2>&1 || fail "second run failed"
[ -d wd2/run_002/exec_0003 ] || fail "second run should be run_002"
"$PD" bench slow.yaml -q --workdir other >/dev/null 2>&1 || fail "--workdir run failed"
[ -f other/run_001/results.csv ] || fail "--workdir ignored"

# 6. parser_script through python3, when there is one
if command -v python3 >/dev/null 2>&1; then
    cat >py.yaml <<'EOF'
benchmark: {name: py, workdir: ./wd3}
vars:
  n: {type: int, sweep: {mode: list, values: [4]}}
command: {template: "echo 'elapsed {{ n }}.5 s'"}
scripts:
  - name: p
    script_template: "{{ command.template }} > log.txt"
    parser:
      file: log.txt
      metrics: [{name: elapsed}]
      parser_script: |
        def parse(path):
            return {"elapsed": float(open(path).read().split()[1]) * 2}
EOF
    "$PD" bench --results-layout short py.yaml -q >/dev/null 2>py.log || { cat py.log; fail "python parser run"; }
    grep -q '^exec_0001,1,4,9.0$' wd3/run_001/results.csv || fail "python parser metrics: $(cat wd3/run_001/results.csv)"
fi
echo "bench_local: ok"
