#!/bin/sh
# The SLURM executor against stub sbatch/squeue/sacct/scontrol/scancel on
# PATH (the real single-node SLURM runs in `make check-slurm`): the sbatch
# command line, polling to the final state, the scontrol fallback when sacct
# has no accounting, failures, scancel on Ctrl-C, benchmark.timeout as the
# job's time limit, SLURM commands that hang (issue #13, item 9), and the
# jobs of a harness killed with -9, scancelled by --resume (item 6).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-slurm.XXXXXX)
cleanup() {
    for p in "$T"/jobs/*.pid; do [ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$T/bin" "$T/jobs"
export STUB_JOBS="$T/jobs"

# sbatch: log the arguments, run the script in the background like a job
cat >"$T/bin/sbatch" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/sbatch.log"
n=$(($(cat "$STUB_JOBS/next" 2>/dev/null || echo 100) + 1)); echo $n >"$STUB_JOBS/next"
for a in "$@"; do
    case "$a" in
        --chdir=*) dir=${a#--chdir=};; --output=*) out=${a#--output=};; --error=*) err=${a#--error=};;
        --*) ;; *) script=$a;;
    esac
done
# a session of its own, as a real job: paddiser kills what sbatch leaves in its
# group, so sbatch returns once the job has left it
setsid sh -c 'touch "$STUB_JOBS/$2.started"; cd "$1" && SLURM_JOB_ID=$2 bash "$3" >"$4" 2>"$5"; echo $? >"$STUB_JOBS/$2.rc"' \
    job "$dir" "$n" "$script" "$out" "$err" </dev/null >/dev/null 2>&1 &
until [ -e "$STUB_JOBS/$n.started" ]; do sleep 0.01; done
echo $! >"$STUB_JOBS/$n.pid"
echo "$n;cluster"
EOF
# squeue -h -o "%i %T" -j a,b: jobs without an exit code are RUNNING
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
rc=$(cat "$STUB_JOBS/$id.rc")
if [ "$rc" -eq 0 ]; then echo "$id|COMPLETED|0:0"; elif [ "$rc" -eq 99 ]; then echo "$id|TIMEOUT|0:15"; else echo "$id|FAILED|$rc:0"; fi
EOF
cat >"$T/bin/scontrol" <<'EOF'
#!/bin/sh
id=$(echo "$*" | sed 's/.* //')
rc=$(cat "$STUB_JOBS/$id.rc")
if [ "$rc" -eq 0 ]; then st=COMPLETED; else st=FAILED; fi
echo "JobId=$id JobName=x UserId=u(0) JobState=$st Reason=None ExitCode=$rc:0 RunTime=00:00:01"
EOF
cat >"$T/bin/scancel" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_JOBS/scancel.log"
kill "$(cat "$STUB_JOBS/$1.pid")" 2>/dev/null; pkill -P "$(cat "$STUB_JOBS/$1.pid")" 2>/dev/null
echo 143 >"$STUB_JOBS/$1.rc"
EOF
chmod +x "$T/bin/"*
cp "$T/bin/sbatch" "$T/sbatch.job"
export PATH="$T/bin:$PATH"

cat >"$T/study.yaml" <<'EOF'
benchmark:
  name: stub
  workdir: ./wd
  executor: slurm
  parallel: 2
  random_seed: 1 # IOPS's shuffle runs 1, 2, 3 in number order for this seed
  slurm_options: {poll_interval: 0.1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "printf 'xv=%s\\njob=%s\\n' {{ x }} $SLURM_JOB_ID"}
scripts:
  - name: sj
    script_template: |
      #!/bin/bash
      #SBATCH --time=00:01:00
      {{ command.template }} > out.txt
      [ {{ x }} -ne 2 ] || exit 4
    parser: {file: out.txt, metrics: [{name: xv}, {name: job}]}
EOF
cd "$T"
rc=0; "$PD" bench --results-layout short study.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "expected exit 1 (exec_0002 fails), got $rc"; }
R=$T/wd/run_001
grep -qx -- "--parsable --job-name=sj_exec_0001_r1 --chdir=$R/exec_0001/repetition_001 --output=$R/exec_0001/repetition_001/stdout --error=$R/exec_0001/repetition_001/stderr $R/exec_0001/repetition_001/run_sj.sh" jobs/sbatch.log ||
    { cat jobs/sbatch.log; fail "sbatch command line"; }
grep -q -- '-h -o %i %T -j 10[0-9]' jobs/squeue.log || fail "squeue not polled: $(cat jobs/squeue.log)"
grep -q '"job_id": "101"' "$R/exec_0001/repetition_001/__iops_status.json" || fail "job id not recorded"
grep -q '"executor": "slurm"' "$R/exec_0001/repetition_001/__iops_status.json" || fail "executor not slurm"
grep -q '"status": "FAILED"' "$R/exec_0002/repetition_001/__iops_status.json" || fail "exec_0002 should have failed"
grep -q '"exit_code": 4' "$R/exec_0002/repetition_001/__iops_status.json" || fail "exit code 4 not recorded"
printf 'execution_id,repetition,x,xv,job\nexec_0001,1,1,1,101\nexec_0003,1,3,3,103\n' >exp.csv
diff exp.csv "$R/results.csv" >&2 || fail "results.csv"

# no accounting: the final state comes from scontrol
rc=0; STUB_NO_ACCOUNTING=1 "$PD" bench study.yaml -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "scontrol fallback: expected exit 1, got $rc"; }
grep -q '"status": "SUCCEEDED"' wd/run_002/exec_0003/repetition_001/__iops_status.json || fail "scontrol fallback state"
grep -q '"exit_code": 4' wd/run_002/exec_0002/repetition_001/__iops_status.json || fail "scontrol fallback exit code"

# sbatch refusing the job: the repetition fails with sbatch's message
printf '#!/bin/sh\necho "sbatch: error: invalid partition" >&2\nexit 1\n' >bin/sbatch
rc=0; "$PD" bench study.yaml -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] && grep -q "sbatch failed for exec_0001 rep 1: sbatch: error: invalid partition" err.log ||
    { cat err.log; fail "sbatch failure not reported"; }

# Ctrl-C: every job in flight is scancelled and marked cancelled
cat >bin/sbatch <<'EOF'
#!/bin/sh
n=$(($(cat "$STUB_JOBS/next" 2>/dev/null || echo 100) + 1)); echo $n >"$STUB_JOBS/next"
# the job writes its pid once in a session of its own: paddiser kills what
# sbatch leaves in its group, and a job still forking out of it died with it
setsid sh -c 'echo $$ >"$1"; exec sleep 30' job "$STUB_JOBS/$n.pid" </dev/null >/dev/null 2>&1 &
until [ -s "$STUB_JOBS/$n.pid" ]; do sleep 0.01; done
echo "$n"
EOF
rm -f jobs/scancel.log
"$PD" bench study.yaml -q >/dev/null 2>int.log &
pid=$!
i=0
until [ "$(grep -ls '"job_id": "' wd/run_004/exec_000*/repetition_001/__iops_status.json 2>/dev/null | wc -l)" -ge 2 ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "jobs never submitted"; sleep 0.05
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat int.log; fail "expected exit 130, got $rc"; }
[ "$(wc -l <jobs/scancel.log)" -eq 2 ] || fail "scancel calls: $(cat jobs/scancel.log 2>/dev/null)"
grep -q '"status": "CANCELLED"' wd/run_004/exec_0001/repetition_001/__iops_status.json || fail "not cancelled"
grep -q '"status": "PENDING"' wd/run_004/exec_0003/repetition_001/__iops_status.json || fail "exec_0003 should be pending"

# kill -9 of the harness: its jobs stay queued/running; --resume asks squeue
# about the job id each unfinished repetition's status file records and
# scancels the ones still pending or running, saying so, before submitting
# again (issue #13, item 6; the old harness submitted them a second time)
rm -f jobs/scancel.log
"$PD" bench study.yaml -q >/dev/null 2>k9.log &
pid=$!
i=0
until [ "$(grep -ls '"job_id": "' wd/run_005/exec_000*/repetition_001/__iops_status.json 2>/dev/null | wc -l)" -ge 2 ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "kill -9: jobs never submitted"; sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
j1=$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' wd/run_005/exec_0001/repetition_001/__iops_status.json)
j2=$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' wd/run_005/exec_0002/repetition_001/__iops_status.json)
kill -0 "$(cat jobs/$j1.pid)" || fail "kill -9: job $j1 did not outlive the harness"
cp sbatch.job bin/sbatch
rc=0; "$PD" bench study.yaml --resume -q >/dev/null 2>k9.log || rc=$?
[ "$rc" -eq 1 ] || { cat k9.log; fail "resume after kill -9: exit $rc, want 1 (exec_0002 fails)"; }
for j in $j1 $j2; do
    grep -qx "$j" jobs/scancel.log || fail "--resume did not scancel job $j: $(cat jobs/scancel.log 2>/dev/null)"
done
grep -q "exec_0001 rep 1: its previous job $j1 is still queued or running; scancel before the repetition runs again" k9.log ||
    fail "--resume did not say it cancelled job $j1: $(cat k9.log)"
[ "$(wc -l <jobs/scancel.log)" -eq 2 ] || fail "scancel calls after --resume: $(cat jobs/scancel.log)"
grep -q '"status": "SUCCEEDED"' wd/run_005/exec_0001/repetition_001/__iops_status.json || fail "exec_0001 not run again"

# benchmark.timeout: the job's time limit (the study above sets its own with
# #SBATCH --time, and got none); a job ending TIMEOUT is timed out
cp sbatch.job bin/sbatch
cat >limit.yaml <<'EOF'
benchmark:
  name: limit
  workdir: ./wd_limit
  executor: slurm
  timeout: 90
  slurm_options: {poll_interval: 0.1, command_timeout: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "true"}
scripts:
  - name: sj
    script_template: |
      #!/bin/bash
      [ {{ x }} -ne 2 ] || exit 99
EOF
rm -f jobs/sbatch.log
rc=0; "$PD" bench limit.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "TIMEOUT job: exit $rc, want 1"; }
grep -q -- "--time=1:30 $T/wd_limit/run_001/exec_0001/repetition_001/run_sj.sh\$" jobs/sbatch.log ||
    fail "no --time=1:30 from benchmark.timeout: $(cat jobs/sbatch.log)"
grep -q '"status": "TIMEOUT"' wd_limit/run_001/exec_0002/repetition_001/__iops_status.json || fail "TIMEOUT not timed_out"
grep -q "1/2 repetitions succeeded, 1 failed (1 timed out)" out.log || fail "totals: $(cat out.log)"

# squeue that hangs: stopped after slurm_options.command_timeout (2 s: the
# stubs that answer take tens of ms, more on a loaded machine) and named;
# the final states still come from sacct
printf '#!/bin/sh\nsleep 30\n' >bin/squeue
rc=0; "$PD" bench limit.yaml -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "hung squeue: exit $rc, want 1"; }
grep -q "squeue did not finish within 2 s: stopped (SIGTERM, then SIGKILL) (benchmark.slurm_options.command_timeout)" err.log ||
    fail "hung squeue not named: $(cat err.log)"
grep -q '"status": "SUCCEEDED"' wd_limit/run_002/exec_0001/repetition_001/__iops_status.json || fail "hung squeue: state"
# sbatch that hangs fails its repetition, saying so
printf '#!/bin/sh\nsleep 30\n' >bin/sbatch
rc=0; "$PD" bench limit.yaml -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] && grep -q "sbatch failed for exec_0001 rep 1: sbatch did not finish within 2 s" err.log ||
    { cat err.log; fail "hung sbatch: exit $rc"; }
echo "bench_slurm_stub: ok"
