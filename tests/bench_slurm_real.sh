#!/bin/sh
# paddiser bench through a real single-node SLURM on localhost: the membw
# example runs as SLURM jobs and yields its metrics, and Ctrl-C scancels the
# jobs in flight. Needs root, slurm-wlm and munge: `make check-slurm` sets
# PADDISER_CHECK_SLURM=1 and runs it; in the unit suite it skips.
set -eu
if [ "${PADDISER_CHECK_SLURM:-}" != 1 ]; then
    echo "bench_slurm_real: SKIP (run by make check-slurm)"; exit 0
fi
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PD=$(cd "$BUILD" && pwd)/paddiser
STUDY=${CHECK_SLURM_STUDY:-$ROOT/examples/membw/membw.yaml}
export MEMBW_BIN=${MEMBW_BIN:-$(cd "$BUILD" && pwd)/membw-triad}
W=$(mktemp -d /tmp/paddiser-check-slurm.XXXXXX)
chmod 0711 "$W" # munged (the munge user) reaches its socket below
# the cluster's state in a directory of this test's own, never a fixed name
export PADDISER_SLURM_DIR=$W/slurm
D=$PADDISER_SLURM_DIR
trap '"$ROOT/scripts/slurm-localhost.sh" stop; rm -rf "$W"' EXIT
fail() { echo "check-slurm: FAIL: $*" >&2; exit 1; }

"$ROOT/scripts/slurm-localhost.sh" start
export SLURM_CONF=$D/etc/slurm.conf

# 1. the example study, every repetition a SLURM job
"$PD" bench --results-layout short "$STUDY" --executor slurm --parallel 4 --workdir "$W/membw"
R=$W/membw/run_001
n=$(tail -n +2 "$R/results.csv" | wc -l)
[ "$n" -eq 12 ] || fail "expected 12 result rows, got $n"
if tail -n +2 "$R/results.csv" | awk -F, '$6 == "" || $7 == "" {bad=1} END {exit !bad}'; then
    cat "$R/results.csv"; fail "missing metrics in results.csv"
fi
for s in "$R"/exec_*/repetition_*/__iops_status.json; do
    grep -q '"status": "SUCCEEDED"' "$s" && grep -q '"executor": "slurm"' "$s" &&
        grep -q '"job_id": "[0-9]' "$s" || { cat "$s"; fail "$s"; }
done
if grep -q 'resource_sampling: true' "$STUDY"; then
    ls "$R"/exec_0001/repetition_001/__iops_trace_*_[0-9]*.csv >/dev/null 2>&1 || fail "no CPU trace named by job id"
    [ "$(tail -n +2 "$R/__iops_resource_summary.csv" | wc -l)" -eq 12 ] || fail "run summary rows"
fi
sed -n 2p "$R/exec_0001/repetition_001/run_triad.sh" | grep -q '^#SBATCH --ntasks=1' ||
    fail "generated script lost its #SBATCH header"

# 2. Ctrl-C: the jobs in flight are scancelled
cat >"$W/sleep.yaml" <<EOF2
benchmark: {name: sleepers, workdir: $W/sleep, executor: slurm, parallel: 2, slurm_options: {poll_interval: 0.2}}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "sleep 60"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      #SBATCH --cpus-per-task=1
      {{ command.template }}
EOF2
"$PD" bench "$W/sleep.yaml" -q >/dev/null 2>"$W/int.log" &
pid=$!
i=0
until [ "$(squeue -h -t RUNNING -n s_exec_0001_r1,s_exec_0002_r1 2>/dev/null | wc -l)" -eq 2 ]; do
    i=$((i + 1)); [ $i -lt 300 ] || { kill -INT $pid; fail "sleep jobs never ran"; }; sleep 0.1
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat "$W/int.log"; fail "interrupted run exit $rc, expected 130"; }
i=0
until [ -z "$(squeue -h -n s_exec_0001_r1,s_exec_0002_r1,s_exec_0003_r1 -t PENDING,RUNNING 2>/dev/null)" ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "jobs still queued after Ctrl-C: $(squeue -h)"; sleep 0.1
done
grep -q '"status": "CANCELLED"' "$W/sleep/run_001/exec_0001/repetition_001/__iops_status.json" || fail "not cancelled"
# 3. single-allocation mode (slurm_options.allocation.mode: single), with
# IOPS's default command templates written out (slurm_options.commands):
# one allocation runs every repetition; each script's srun starts a step in
# it; x=3 runs past test_timeout and ends TIMEOUT; every other repetition has
# its metrics and the allocation's job id
cat >"$W/single.yaml" <<EOF2
benchmark:
  name: single
  workdir: $W/single
  executor: slurm
  repetitions: 2
  slurm_options:
    poll_interval: 0.2
    commands:
      status: "squeue -j {job_id} --noheader --format=%T"
      info: "scontrol show job {job_id}"
      cancel: "scancel {job_id}"
    allocation:
      mode: single
      test_timeout: 3
      allocation_script: |
        #SBATCH --ntasks=1
        #SBATCH --time=00:05:00
        export SETUP_DONE=yes
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "srun -n 1 sh -c 'echo xv={{ x }}; echo step=\$SLURM_STEP_ID'"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      printf 'job=%s\\nsetup=%s\\n' "\$SLURM_JOB_ID" "\$SETUP_DONE" >> out.txt
      [ {{ x }} -ne 3 ] || sleep 60
    parser: {file: out.txt, metrics: [{name: xv}, {name: step}, {name: job}, {name: setup}]}
EOF2
rc=0; "$PD" bench --results-layout short "$W/single.yaml" -q >"$W/single.out" 2>"$W/single.err" || rc=$?
R=$W/single/run_001
[ "$rc" -eq 1 ] || { cat "$W/single.err"; fail "single allocation: exit $rc, want 1 (x=3 times out)"; }
job=$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$R/exec_0001/repetition_001/__iops_status.json")
[ -n "$job" ] || fail "single allocation: no job id"
for s in "$R"/exec_*/repetition_*/__iops_status.json; do
    grep -q "\"job_id\": \"$job\"" "$s" || { cat "$s"; fail "single allocation: $s ran elsewhere than job $job"; }
done
for e in 1 2; do for r in 1 2; do
    grep -q '"status": "SUCCEEDED"' "$R/exec_000$e/repetition_00$r/__iops_status.json" || fail "single: exec_000$e rep $r"
done; done
for r in 1 2; do
    grep -q '"status": "TIMEOUT"' "$R/exec_0003/repetition_00$r/__iops_status.json" || fail "single: exec_0003 rep $r TIMEOUT"
done
# every row: xv = x, a step id (srun ran inside the allocation), the job, the setup line's variable
tail -n +2 "$R/results.csv" | awk -F, -v job="$job" '
    $3 != $4 || $5 !~ /^[0-9]+$/ || $6 != job || $7 != "yes" {print "bad row: " $0; bad = 1}
    END {exit bad || NR != 4}' || { cat "$R/results.csv"; fail "single allocation: results.csv"; }
[ "$(tail -n +2 "$R/results.csv" | cut -d, -f5 | sort -u | wc -l)" -eq 4 ] ||
    fail "single allocation: each repetition's srun should be a step of its own: $(cat "$R/results.csv")"
[ -e "$R/logs/single_alloc_$job.out" ] || fail "single allocation: the kickoff's #SBATCH --output was not used"
scontrol show job "$job" | grep -q 'JobName=iops_single_alloc' || fail "single allocation: job name"
# 4. Ctrl-C in single-allocation mode: the allocation is scancelled with the
# repetition it was running (CANCELLED); the others stay PENDING
cat >"$W/single_int.yaml" <<EOF2
benchmark:
  name: single_int
  workdir: $W/single_int
  executor: slurm
  slurm_options:
    poll_interval: 0.2
    allocation: {mode: single, allocation_script: "#SBATCH --ntasks=1"}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "srun -n 1 sleep 60"}
scripts:
  - name: s
    script_template: "{{ command.template }}\\n"
EOF2
"$PD" bench "$W/single_int.yaml" -q >/dev/null 2>"$W/single_int.err" &
pid=$!
R=$W/single_int/run_001
i=0
until grep -qs '"status": "RUNNING"' "$R"/exec_000*/repetition_001/__iops_status.json; do
    i=$((i + 1)); [ $i -lt 300 ] || { kill -INT $pid; fail "single allocation: nothing ran"; }; sleep 0.1
done
ijob=$(sed -n 's/.*"job_id": "\(.*\)".*/\1/p' "$R/exec_0001/repetition_001/__iops_status.json")
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" -eq 130 ] || { cat "$W/single_int.err"; fail "single allocation Ctrl-C: exit $rc, want 130"; }
i=0
until [ -z "$(squeue -h -j "$ijob" -t PENDING,RUNNING,COMPLETING 2>/dev/null)" ]; do
    i=$((i + 1)); [ $i -lt 100 ] || fail "allocation $ijob still queued after Ctrl-C: $(squeue -h)"; sleep 0.1
done
[ "$(grep -l '"status": "CANCELLED"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 1 ] &&
    [ "$(grep -l '"status": "PENDING"' "$R"/exec_000*/repetition_001/__iops_status.json | wc -l)" -eq 1 ] ||
    fail "single allocation Ctrl-C: want one CANCELLED and one PENDING repetition"
echo "check-slurm: ok (12 repetitions ran as SLURM jobs; Ctrl-C scancelled the jobs in flight;"
echo "check-slurm: 6 repetitions ran in one single allocation ($job), 2 timed out by test_timeout;"
echo "check-slurm: Ctrl-C scancelled the single allocation $ijob)"
