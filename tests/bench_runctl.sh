#!/bin/sh
# Run control of paddiser bench on the local executor (issue #16, item 6):
# --fail-fast and --max-fail N start nothing more once enough repetitions
# failed (those running finish; --resume runs the rest), the program the
# command starts is checked before anything runs (exit 2, named), and
# --fail-on-missing-metric fails a repetition whose parser missed a metric.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-runctl.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"
status() { sed -n 's/.*"status": "\(.*\)".*/\1/p' "$1/__iops_status.json"; }

# six executions run one at a time, in number order (random_seed 140: IOPS's
# run order, docs/bench.md "Run order"); x=2 fails
cat >study.yaml <<'EOF'
benchmark: {name: ctl, workdir: ./wd, repetitions: 1, parallel: 1, random_seed: 140}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3, 4, 5, 6]}}
command: {template: "printf 'score=%s\\n' {{ x * 10 }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      echo ran >> {{ workdir }}/../../ran_{{ x }}
      {{ command.template }} > out.txt
      [ {{ x }} -ne 2 ] && [ {{ x }} -ne 4 ] || exit 3
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics: [{name: score}]
EOF

# 1. --fail-fast: x=3..6 never start; exit 1; the rest are PENDING
rc=0; "$PD" bench study.yaml -q --fail-fast >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "--fail-fast: exit $rc, want 1"; }
R=wd/run_001
[ -e ran_1 ] && [ -e ran_2 ] || fail "--fail-fast: x=1 and x=2 should have run"
for x in 3 4 5 6; do [ ! -e ran_$x ] || fail "--fail-fast: x=$x ran after the failure"; done
[ "$(status $R/exec_0002/repetition_001)" = FAILED ] || fail "exec_0002: $(status $R/exec_0002/repetition_001)"
[ "$(status $R/exec_0003/repetition_001)" = PENDING ] || fail "exec_0003 should be PENDING"
grep -q "stopped after 1 failed repetition (--fail-fast): 4 not started" err.log || { cat err.log; fail "no stop message"; }
grep -q -- "--resume $PWD/$R" err.log || fail "no resume hint: $(cat err.log)"
grep -q "1/6 repetitions succeeded, 1 failed" out.log || { cat out.log; fail "totals"; }

# --resume runs the rest (without --fail-fast: all of them)
rc=0; "$PD" bench study.yaml -q --resume "$R" >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "resume: exit $rc, want 1 (x=2 and x=4 fail)"
for x in 3 4 5 6; do [ -e ran_$x ] || fail "resume: x=$x did not run"; done
grep -q "4/6 repetitions succeeded, 2 failed" out.log || { cat out.log; fail "resume totals"; }

# 2. --max-fail 2: stops after the second failure (x=4), x=5 and 6 never start
rm -f ran_*
rc=0; "$PD" bench study.yaml -q --max-fail 2 >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "--max-fail 2: exit $rc"
for x in 1 2 3 4; do [ -e ran_$x ] || fail "--max-fail 2: x=$x should have run"; done
for x in 5 6; do [ ! -e ran_$x ] || fail "--max-fail 2: x=$x ran after the second failure"; done
grep -q "stopped after 2 failed repetitions (--max-fail): 2 not started" err.log || { cat err.log; fail "max-fail msg"; }
# --max-fail 3 is never reached: everything runs
rm -f ran_*
rc=0; "$PD" bench study.yaml -q --max-fail 3 >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "--max-fail 3: exit $rc"
for x in 1 2 3 4 5 6; do [ -e ran_$x ] || fail "--max-fail 3: x=$x did not run"; done
grep -q "stopped after" err.log && fail "--max-fail 3 stopped: $(cat err.log)"
# usage errors
rc=0; "$PD" bench study.yaml --max-fail 0 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--max-fail must be an integer" err.log || fail "--max-fail 0: exit $rc $(cat err.log)"
rc=0; "$PD" bench study.yaml --fail-fast --max-fail 2 2>err.log || rc=$?
[ "$rc" -eq 2 ] || fail "--fail-fast with --max-fail 2: exit $rc"

# 3. parallel 3 with --fail-fast: the repetitions running when one fails finish
cat >par.yaml <<'EOF'
benchmark: {name: par, workdir: ./wdp, repetitions: 1, parallel: 3, random_seed: 140}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3, 4, 5, 6]}}
command: {template: "sleep 0.{{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      [ {{ x }} -ne 1 ] || exit 5
      {{ command.template }}
      echo done > {{ workdir }}/../../par_{{ x }}
EOF
rc=0; "$PD" bench par.yaml -q --fail-fast >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "parallel --fail-fast: exit $rc"
[ -e par_2 ] && [ -e par_3 ] || fail "parallel --fail-fast: the running x=2 and x=3 should have finished"
[ ! -e par_6 ] || fail "parallel --fail-fast: x=6 started"
grep -q '"status": "SUCCEEDED"' wdp/run_001/exec_0002/repetition_001/__iops_status.json || fail "x=2 not SUCCEEDED"

# 4. the command's program is checked before anything runs
sed 's/printf /no-such-program-pd16 /' study.yaml >missing.yaml
sed -i 's|workdir: ./wd|workdir: ./wdm|' missing.yaml
rm -f ran_*
rc=0; "$PD" bench missing.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] || { cat err.log; fail "missing program: exit $rc, want 2"; }
grep -q "program 'no-such-program-pd16' not found" err.log || fail "missing program not named: $(cat err.log)"
[ "$(grep -c "no-such-program-pd16' not found" err.log)" -eq 1 ] || fail "said more than once: $(cat err.log)"
grep -q "missing.yaml:4: command.template" err.log || fail "no file:line: $(cat err.log)"
[ ! -e ran_1 ] || fail "missing program: a repetition ran"
[ -z "$(ls wdm 2>/dev/null)" ] || fail "missing program: left $(ls wdm)"
# --dry-run: a warning (the study may be checked on another machine than the one it runs on)
rc=0; "$PD" bench missing.yaml --dry-run >out.log 2>err.log || rc=$?
[ "$rc" -eq 0 ] || fail "--dry-run: exit $rc, want 0: $(cat err.log)"
grep -q "warning: .*program 'no-such-program-pd16' not found here.*a local run here would stop" err.log ||
    fail "--dry-run: no warning: $(cat err.log)"
# an absolute path that is not there, and one that is
sed 's|printf |/nonexistent/pd16/tool |' study.yaml | sed 's|workdir: ./wd|workdir: ./wda|' >abs.yaml
rc=0; "$PD" bench abs.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q "program '/nonexistent/pd16/tool' not found (no such executable file" err.log ||
    fail "absolute path: exit $rc $(cat err.log)"
# VAR=value before the program, and a builtin: fine; --no-program-check skips the check
sed 's|printf |LC_ALL=C printf |' study.yaml | sed 's|workdir: ./wd|workdir: ./wdv|' >env.yaml
"$PD" bench env.yaml -q --dry-run >/dev/null 2>err.log || fail "VAR=value printf refused: $(cat err.log)"
# command.env sets PATH (the script exports it): the script's PATH decides,
# the check does not guess it
mkdir -p tools
printf '#!/bin/sh\necho score=$(($1 * 7))\n' >tools/pd16-tool
chmod +x tools/pd16-tool
cat >envpath.yaml <<EOF
benchmark: {name: envpath, workdir: ./wdpath, repetitions: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1]}}
command:
  template: "pd16-tool {{ x }}"
  env: {PATH: "$PWD/tools:/usr/bin:/bin"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {% for name, value in command_env.items() %}export {{ name }}="{{ value }}"
      {% endfor %}
      {{ command.template }} > out.txt
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics: [{name: score}]
EOF
rc=0; "$PD" bench --results-layout short envpath.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 0 ] || fail "command.env PATH: exit $rc: $(cat err.log)"
grep -q "^exec_0001,1,1,7$" wdpath/run_001/results.csv || fail "command.env PATH: $(cat wdpath/run_001/results.csv)"
rc=0; "$PD" bench missing.yaml -q --no-program-check >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "--no-program-check: exit $rc, want 1 (the scripts fail): $(cat err.log)"
[ -e ran_1 ] || fail "--no-program-check: nothing ran"
# slurm: a warning, not an error (the compute nodes may have it); a stub sbatch
# that fails keeps anything from being submitted
mkdir -p stubs
for tool in sbatch squeue scancel; do printf '#!/bin/sh\nexit 1\n' >stubs/$tool; chmod +x stubs/$tool; done
rc=0; PATH="$PWD/stubs:$PATH" "$PD" bench missing.yaml -q --executor slurm >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "slurm: exit $rc, want 1 (sbatch fails): $(cat err.log)"
grep -q "warning: .*program 'no-such-program-pd16' not found here" err.log || fail "slurm: no warning: $(cat err.log)"

# 5. --fail-on-missing-metric: x=3 prints no score
cat >metric.yaml <<'EOF'
benchmark: {name: met, workdir: ./wdmm, repetitions: 1, random_seed: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 3]}}
command: {template: "printf 'score=%s\\n' {{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -ne 3 ]; then {{ command.template }} > out.txt; else echo other=1 > out.txt; fi
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics: [{name: score}]
EOF
rc=0; "$PD" bench metric.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 0 ] || fail "missing metric without the option: exit $rc, want 0 (a warning)"
grep -q "metrics not found" err.log || fail "no warning: $(cat err.log)"
rc=0; "$PD" bench metric.yaml -q --fail-on-missing-metric >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "--fail-on-missing-metric: exit $rc, want 1"
S=wdmm/run_002/exec_0002/repetition_001/__iops_status.json
grep -q '"status": "FAILED"' $S || fail "exec_0002 not FAILED: $(cat $S)"
grep -q '"error": "metrics missing, --fail-on-missing-metric"' $S || fail "no error in $S"
grep -q '"status": "SUCCEEDED"' wdmm/run_002/exec_0001/repetition_001/__iops_status.json || fail "exec_0001"
grep -q "exec_0002 rep 1: failed: metrics missing: score" err.log || fail "not said: $(cat err.log)"
grep -q "1/2 repetitions succeeded, 1 failed" out.log || fail "totals: $(cat out.log)"
echo "bench_runctl: ok"
