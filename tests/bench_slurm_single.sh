#!/bin/sh
# slurm_options.commands and slurm_options.allocation.mode single (issue #16,
# item 5) against stub SLURM commands on PATH (the real single-node SLURM
# runs a single-allocation study in `make check-slurm`):
# - custom submit/status/info/cancel templates are the commands invoked, with
#   {job_id} replaced, and the built-in sbatch/squeue/scontrol/scancel never;
# - single mode submits exactly one allocation (__iops_kickoff.sh), runs every
#   repetition inside it, and writes each repetition's status and results as
#   the per-test mode does (failure, test_timeout, the allocation's job id);
# - Ctrl-C cancels the allocation through the cancel template;
# - an allocation that ends early fails what it did not finish;
# - the configuration errors IOPS 3.5.8's loader gives.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-slurm-single.XXXXXX)
cleanup() {
    for p in "$T"/jobs/*.pid; do
        [ -e "$p" ] || continue
        pkill -s "$(cat "$p")" 2>/dev/null || true
    done
    rm -rf "$T"
}
trap cleanup EXIT
[ -z "${KEEP_T:-}" ] || trap - EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$T/bin" "$T/jobs"
export STUB_JOBS="$T/jobs"

# launch NAME ARGS...: what sbatch and the custom submit command do. Logs
# the arguments one per [..], runs the script (last argument) as a job in a
# session of its own, answers "N;cluster" or, with STUB_CLASSIC, sbatch's
# "Submitted batch job N".
cat >"$T/launch" <<'EOF'
#!/bin/sh
name=$1; shift
{ for a in "$@"; do printf '[%s]' "$a"; done; echo; } >>"$STUB_JOBS/$name.log"
n=$(($(cat "$STUB_JOBS/next" 2>/dev/null || echo 100) + 1)); echo $n >"$STUB_JOBS/next"
dir=$PWD; out=$STUB_JOBS/$n.out; err=$STUB_JOBS/$n.err
for a in "$@"; do
    case "$a" in
        --chdir=*) dir=${a#--chdir=};; --output=*) out=${a#--output=};; --error=*) err=${a#--error=};;
        -*) ;; *) script=$a;;
    esac
done
setsid sh -c 'touch "$STUB_JOBS/$2.started"; cd "$1" && SLURM_JOB_ID=$2 bash "$3" >"$4" 2>"$5"; echo $? >"$STUB_JOBS/$2.rc"' \
    job "$dir" "$n" "$script" "$out" "$err" </dev/null >/dev/null 2>&1 &
until [ -e "$STUB_JOBS/$n.started" ]; do sleep 0.01; done
echo $! >"$STUB_JOBS/$n.pid"
if [ -n "${STUB_CLASSIC:-}" ]; then echo "Submitted batch job $n"; else echo "$n;cluster"; fi
EOF
# the built-in commands: sbatch launches; squeue -h -o "%i %T" -j a,b lists
# jobs without an exit code as RUNNING; sacct knows finished jobs unless
# STUB_NO_ACCOUNTING; scontrol and scancel log (the custom-command cases
# assert they are never called)
printf '#!/bin/sh\nexec "%s/launch" sbatch "$@"\n' "$T" >"$T/bin/sbatch"
cat >"$T/bin/squeue" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/squeue.log"
ids=$(echo "$*" | sed 's/.*-j //' | tr ',' ' ')
for i in $ids; do [ -e "$STUB_JOBS/$i.rc" ] || echo "$i RUNNING"; done
EOF
cat >"$T/bin/sacct" <<'EOF'
#!/bin/sh
[ -z "${STUB_NO_ACCOUNTING:-}" ] || { echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1; }
id=$(echo "$*" | sed 's/.*-j //')
[ -e "$STUB_JOBS/$id.rc" ] || { echo "$id|RUNNING|0:0"; exit 0; }
rc=$(cat "$STUB_JOBS/$id.rc")
if [ "$rc" -eq 0 ]; then echo "$id|COMPLETED|0:0"; elif [ "$rc" -eq 143 ]; then echo "$id|CANCELLED by 0|0:15"; else echo "$id|FAILED|$rc:0"; fi
EOF
cat >"$T/bin/scontrol" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/scontrol.log"
exit 1
EOF
# scancel / the custom cancel: ends the job's whole session (the kickoff's
# `timeout` puts the repetition in a process group of its own)
cat >"$T/kill_job" <<'EOF'
#!/bin/sh
pkill -s "$(cat "$STUB_JOBS/$1.pid")" 2>/dev/null
[ -e "$STUB_JOBS/$1.rc" ] || echo 143 >"$STUB_JOBS/$1.rc"
EOF
printf '#!/bin/sh\necho "$*" >>"$STUB_JOBS/scancel.log"\nsh "%s/kill_job" "$1"\n' "$T" >"$T/bin/scancel"
# the custom commands, IOPS's wrapper example: mystat -r ID --custom (the
# state on its first line, nothing once the job left), myinfo show ID
# (scontrol's multi-line layout), mykill --job=ID
printf '#!/bin/sh\nexec "%s/launch" mysub "$@"\n' "$T" >"$T/bin/mysub"
cat >"$T/bin/mystat" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/mystat.log"
[ "$1" = -r ] || exit 2
[ -e "$STUB_JOBS/$2.rc" ] || echo RUNNING
EOF
cat >"$T/bin/myinfo" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/myinfo.log"
id=$2
if [ ! -e "$STUB_JOBS/$id.rc" ]; then st=RUNNING; rc=0
else rc=$(cat "$STUB_JOBS/$id.rc"); if [ "$rc" -eq 0 ]; then st=COMPLETED; else st=FAILED; fi; fi
printf 'JobId=%s JobName=x\n   JobState=%s Reason=None Dependency=(null)\n   Restarts=0 BatchFlag=1 ExitCode=%s:0\n   DerivedExitCode=0:0\n' "$id" "$st" "$rc"
EOF
printf '#!/bin/sh\necho "$*" >>"$STUB_JOBS/mykill.log"\nsh "%s/kill_job" "${1#--job=}"\n' "$T" >"$T/bin/mykill"
chmod +x "$T/launch" "$T/bin/"*
export PATH="$T/bin:$PATH"
cd "$T"

# 1. per-test mode with custom commands (no accounting: the info template
# gives the final state). The submit template's words come first, then
# paddiser's sbatch options; the job id is read from sbatch's classic answer.
cat >cmds.yaml <<'EOF'
benchmark:
  name: cmds
  workdir: ./wd_cmds
  executor: slurm
  parallel: 2
  random_seed: 1
  slurm_options:
    poll_interval: 0.1
    commands:
      submit: "mysub --account='acme corp'"
      status: "mystat -r {job_id} --custom"
      info: "myinfo show {job_id}"
      cancel: "mykill --job={job_id}"
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "printf 'xv=%s\\njob=%s\\n' {{ x }} $SLURM_JOB_ID"}
scripts:
  - name: sj
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      sleep ${STUB_SLEEP:-0}
      [ {{ x }} -ne 2 ] || exit 4
    parser: {file: out.txt, metrics: [{name: xv}, {name: job}]}
EOF
rc=0; STUB_CLASSIC=1 STUB_NO_ACCOUNTING=1 "$PD" bench --results-layout short cmds.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "custom commands: exit $rc, want 1 (exec_0002 fails)"; }
R=$T/wd_cmds/run_001
grep -qxF "[--account=acme corp][--parsable][--job-name=sj_exec_0001_r1][--chdir=$R/exec_0001/repetition_001][--output=$R/exec_0001/repetition_001/stdout][--error=$R/exec_0001/repetition_001/stderr][$R/exec_0001/repetition_001/run_sj.sh]" jobs/mysub.log ||
    fail "submit template's command line: $(cat jobs/mysub.log)"
[ "$(wc -l <jobs/mysub.log)" -eq 3 ] || fail "3 submissions expected: $(cat jobs/mysub.log)"
grep -qx -- "-r 101 --custom" jobs/mystat.log || fail "status template without the job id: $(cat jobs/mystat.log)"
grep -qx "show 102" jobs/myinfo.log || fail "info template without the job id: $(cat jobs/myinfo.log)"
for b in sbatch squeue scontrol scancel; do
    [ ! -e "jobs/$b.log" ] || fail "built-in $b called despite slurm_options.commands: $(cat "jobs/$b.log")"
done
printf 'execution_id,repetition,x,xv,job\nexec_0001,1,1,1,101\nexec_0003,1,3,3,103\n' >exp.csv
diff exp.csv "$R/results.csv" >&2 || fail "custom commands: results.csv"
grep -q '"exit_code": 4' "$R/exec_0002/repetition_001/__iops_status.json" || fail "info template's exit code"
grep -q '"job_id": "102"' "$R/exec_0002/repetition_001/__iops_status.json" || fail "classic sbatch answer's job id"

# Ctrl-C: the cancel template, once per job in flight
STUB_SLEEP=30 "$PD" bench cmds.yaml -q >/dev/null 2>int.log &
pid=$!
i=0
until [ "$(grep -ls '"job_id": "' wd_cmds/run_002/exec_000*/repetition_001/__iops_status.json 2>/dev/null | wc -l)" -ge 2 ]; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "custom commands: jobs never submitted"; sleep 0.05
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat int.log; fail "custom commands Ctrl-C: exit $rc, want 130"; }
for s in wd_cmds/run_002/exec_0001/repetition_001 wd_cmds/run_002/exec_0002/repetition_001; do
    j=$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$s/__iops_status.json")
    grep -qx -- "--job=$j" jobs/mykill.log || fail "cancel template not run for job $j: $(cat jobs/mykill.log)"
done
[ ! -e jobs/scancel.log ] || fail "built-in scancel called: $(cat jobs/scancel.log)"

# 2. single-allocation mode: one sbatch of __iops_kickoff.sh; inside it every
# repetition runs in turn with the allocation's job id; one fails (exit 4),
# one runs past test_timeout (TIMEOUT, killed), the rest succeed
rm -f jobs/*.log
cat >single.yaml <<'EOF'
benchmark:
  name: single
  workdir: ./wd_single
  executor: slurm
  parallel: 2
  repetitions: 2
  slurm_options:
    poll_interval: 0.1
    allocation:
      mode: single
      test_timeout: 1
      allocation_script: |
        #!/bin/bash
        #SBATCH --nodes=1
        export FROM_SETUP=yes
        #SBATCH --time=00:05:00
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "printf 'xv=%s\\njob=%s\\nsetup=%s\\n' {{ x }} $SLURM_JOB_ID $FROM_SETUP"}
scripts:
  - name: sj
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      echo "rep {{ repetition }} of {{ x }}"
      [ {{ x }} -ne 2 ] || exit 4
      [ {{ x }} -ne 3 ] || [ {{ repetition }} -ne 2 ] || { sleep 30; echo not killed >>{{ workdir }}/late; }
    parser: {file: out.txt, metrics: [{name: xv}, {name: job}, {name: setup}]}
EOF
rc=0; "$PD" bench --results-layout short single.yaml >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "single: exit $rc, want 1"; }
R=$T/wd_single/run_001
[ "$(wc -l <jobs/sbatch.log)" -eq 1 ] || fail "single: $(wc -l <jobs/sbatch.log) submissions, want 1: $(cat jobs/sbatch.log)"
grep -qxF "[--parsable][$R/__iops_kickoff.sh]" jobs/sbatch.log || fail "single: sbatch command line $(cat jobs/sbatch.log)"
job=$(cat jobs/next)
grep -q "6 repetitions submitted as single allocation $job" err.log || fail "single: no submission line: $(cat err.log)"
grep -q "warning: parallel 2 ignored in single-allocation mode" err.log || fail "single: parallel not said ignored"
# the allocation_script's #SBATCH lines first (SLURM stops reading them at
# the first command), then paddiser's, then its setup lines
sed -n '1,6p' "$R/__iops_kickoff.sh" >head.txt
printf '#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:05:00\n#SBATCH --job-name=iops_single_alloc\n#SBATCH --output=%s/logs/single_alloc_%%j.out\n#SBATCH --error=%s/logs/single_alloc_%%j.err\n' "$R" "$R" >exp_head.txt
diff exp_head.txt head.txt >&2 || fail "kickoff script header"
grep -qx 'export FROM_SETUP=yes' "$R/__iops_kickoff.sh" || fail "setup line lost"
[ "$(grep -c '^run_test ' "$R/__iops_kickoff.sh")" -eq 6 ] || fail "kickoff does not list 6 repetitions"
for s in "$R"/exec_*/repetition_*/__iops_status.json; do
    grep -q "\"job_id\": \"$job\"" "$s" && grep -q '"executor": "slurm"' "$s" || { cat "$s"; fail "$s: job id"; }
done
for r in 1 2; do
    grep -q '"status": "SUCCEEDED"' "$R/exec_0001/repetition_00$r/__iops_status.json" || fail "exec_0001 rep $r"
    grep -q '"status": "FAILED"' "$R/exec_0002/repetition_00$r/__iops_status.json" &&
        grep -q '"exit_code": 4' "$R/exec_0002/repetition_00$r/__iops_status.json" || fail "exec_0002 rep $r: exit 4"
    grep -qx "rep $r of 1" "$R/exec_0001/repetition_00$r/stdout" || fail "exec_0001 rep $r: its stdout"
done
grep -q '"status": "SUCCEEDED"' "$R/exec_0003/repetition_001/__iops_status.json" || fail "exec_0003 rep 1"
grep -q '"status": "TIMEOUT"' "$R/exec_0003/repetition_002/__iops_status.json" || fail "exec_0003 rep 2: TIMEOUT"
printf 'execution_id,repetition,x,xv,job,setup\nexec_0001,1,1,1,%s,yes\nexec_0001,2,1,1,%s,yes\nexec_0003,1,3,3,%s,yes\n' \
    "$job" "$job" "$job" >exp.csv
{ head -n 1 "$R/results.csv"; tail -n +2 "$R/results.csv" | sort; } >got.csv # rows in run order
diff exp.csv got.csv >&2 || fail "single: results.csv"
grep -q "3/6 repetitions succeeded, 3 failed (1 timed out)" out.log || fail "single: totals $(cat out.log)"
sleep 0.5
[ ! -e wd_single/late ] || fail "the timed-out repetition was not killed"
grep -q -- "-j $job" jobs/squeue.log || fail "single: the allocation was not polled"

# 3. single mode with custom commands; Ctrl-C cancels the allocation through
# the cancel template: the running repetition is CANCELLED, the others stay
# PENDING (resumable)
rm -f jobs/*.log
cat >single_int.yaml <<'EOF'
benchmark:
  name: single_int
  workdir: ./wd_single_int
  executor: slurm
  slurm_options:
    poll_interval: 0.1
    commands: {submit: "mysub", status: "mystat -r {job_id} --custom", cancel: "mykill --job={job_id}"}
    allocation: {mode: single, allocation_script: "#SBATCH -N 1"}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "sleep ${STUB_SLEEP:-30}"}
scripts:
  - name: s
    script_template: "{{ command.template }}\n"
EOF
"$PD" bench single_int.yaml -q >/dev/null 2>int.log &
pid=$!
R=$T/wd_single_int/run_001
i=0
until grep -qs '"status": "RUNNING"' "$R"/exec_000*/repetition_001/__iops_status.json; do
    i=$((i + 1)); [ $i -lt 200 ] || { kill -INT $pid; fail "single Ctrl-C: no repetition ran"; }; sleep 0.05
done
# ... and its status polled once (every 0.1 s) before the Ctrl-C: under a
# loaded ASan build the signal could come before the first poll
i=0
until grep -qs -- "--custom" jobs/mystat.log; do
    i=$((i + 1)); [ $i -lt 200 ] || { kill -INT $pid; fail "single Ctrl-C: status template not used"; }; sleep 0.05
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat int.log; fail "single Ctrl-C: exit $rc, want 130"; }
job=$(cat jobs/next)
[ "$(wc -l <jobs/mysub.log)" -eq 1 ] || fail "single Ctrl-C: one submission expected"
grep -qx -- "--job=$job" jobs/mykill.log || fail "single Ctrl-C: cancel template not run: $(cat jobs/mykill.log 2>/dev/null)"
grep -q -- "-r $job --custom" jobs/mystat.log || fail "single Ctrl-C: status template not used"
[ "$(grep -l '"status": "CANCELLED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 1 ] ||
    fail "single Ctrl-C: one repetition should be CANCELLED"
[ "$(grep -l '"status": "PENDING"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 2 ] ||
    fail "single Ctrl-C: two repetitions should be PENDING"
for b in sbatch squeue scancel; do
    [ ! -e "jobs/$b.log" ] || fail "single Ctrl-C: built-in $b called: $(cat "jobs/$b.log")"
done
# --resume: a new allocation runs the three again (the cancelled one and the
# two never started), the old one's id is asked about once
rc=0; STUB_SLEEP=0 "$PD" bench single_int.yaml --resume -q >/dev/null 2>res.log || rc=$?
[ "$rc" -eq 0 ] || { cat res.log; fail "single --resume: exit $rc, want 0"; }
[ "$(wc -l <jobs/mysub.log)" -eq 2 ] || fail "single --resume: one more submission expected"
job2=$(cat jobs/next)
[ "$(grep -l "\"job_id\": \"$job2\"" "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 3 ] &&
    [ "$(grep -l '"status": "SUCCEEDED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 3 ] ||
    fail "single --resume: the three should have succeeded in allocation $job2"
[ "$(grep -c -- "-r $job --custom" jobs/mystat.log)" -ge 1 ] || fail "single --resume: old allocation not asked about"

# 4. an allocation that ends early (cancelled by someone else while its first
# repetition ran): that one ends CANCELLED with it, the others FAILED
# ("before it ran")
rm -f jobs/*.log
sed -e 's/wd_single_int/wd_single_end/' -e '/commands:/d' single_int.yaml >single_end.yaml
"$PD" bench single_end.yaml >/dev/null 2>end.log &
pid=$!
R=$T/wd_single_end/run_001
i=0
until grep -qs '"status": "RUNNING"' "$R"/exec_000*/repetition_001/__iops_status.json; do
    i=$((i + 1)); [ $i -lt 200 ] || { kill -INT $pid; fail "allocation end: no repetition ran"; }; sleep 0.05
done
sh "$T/kill_job" "$(cat jobs/next)"
rc=0; wait $pid || rc=$?
[ "$rc" -eq 1 ] || { cat end.log; fail "allocation end: exit $rc, want 1"; }
[ "$(grep -l '"status": "CANCELLED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 1 ] ||
    fail "allocation end: the running repetition should end with the allocation (CANCELLED)"
[ "$(grep -l '"status": "FAILED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 2 ] ||
    fail "allocation end: the two never started should have FAILED"
grep -q "the SLURM allocation ended before it ran" end.log || fail "allocation end: not said: $(cat end.log)"

# 4b. --fail-fast: the stop file the kickoff script checks before each
# repetition; the one it is running when paddiser notices finishes, nothing
# more starts, the rest stay PENDING. Every repetition fails; the second
# waits for the stop file first (20 s at most, in its run directory two
# levels up), so that exactly two fail however slowly paddiser polls.
sed -e 's/wd_single_end/wd_single_ff/' \
    -e 's|sleep ${STUB_SLEEP:-30}|[ {{ x }} = 1 ] \|\| for i in $(seq 400); do [ -e ../../__paddiser_alloc_stop ] \&\& break; sleep 0.05; done; exit 3|' \
    -e 's/values: \[1, 2, 3\]/values: [1, 2, 3, 4, 5]/' single_end.yaml >single_ff.yaml
rc=0; "$PD" bench single_ff.yaml -q --fail-fast >/dev/null 2>ff.log || rc=$?
[ "$rc" -eq 1 ] || { cat ff.log; fail "--fail-fast: exit $rc, want 1"; }
R=$T/wd_single_ff/run_001
[ -e "$R/__paddiser_alloc_stop" ] || fail "--fail-fast: no stop file"
nf=$(grep -l '"status": "FAILED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)
np=$(grep -l '"status": "PENDING"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)
[ "$nf" -eq 2 ] && [ "$np" -eq 3 ] || fail "--fail-fast: $nf failed, $np pending; want 2 failed, 3 pending"

# 5. configuration errors (IOPS 3.5.8's loader checks)
conf_err() { # yaml-fragment expected-message
    sed "s|    allocation: {mode: single, allocation_script: \"#SBATCH -N 1\"}|$1|" single_end.yaml >bad.yaml
    rc=0; "$PD" bench bad.yaml -q >/dev/null 2>bad.log || rc=$?
    [ "$rc" -eq 2 ] && grep -qF "$2" bad.log || { cat bad.log; fail "config error '$2': exit $rc"; }
}
conf_err '    allocation: {mode: single}' \
    'benchmark.slurm_options.allocation.allocation_script: required when mode is '"'single'"
conf_err '    allocation: {mode: single, allocation_script: "module load x"}' \
    'allocation_script: must contain at least one #SBATCH directive'
conf_err '    allocation: {mode: single, allocation_script: "#SBATCH -N 1"}\n  search_method: bayesian\n  bayesian_config: {objective_metric: m}' \
    "allocation.mode 'single' is incompatible with search_method 'bayesian'"
conf_err '    allocation: {mode: whole}' "benchmark.slurm_options.allocation.mode: must be 'single' or 'per-test', found 'whole'"
conf_err '    allocation: {mode: single, allocation_script: "#SBATCH -N 1", test_timeout: 0}' \
    'benchmark.slurm_options.allocation.test_timeout: must be a number of seconds > 0'
conf_err '    commands: {status: "squeue -j {job_id} --format='"'"'%T"}' \
    "benchmark.slurm_options.commands.status: no closing quotation"
conf_err '    commands: {srun: "srun"}' "benchmark.slurm_options.commands.srun: unknown key"
echo "bench_slurm_single: ok"
