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
echo "check-slurm: ok (12 repetitions ran as SLURM jobs; Ctrl-C scancelled the jobs in flight)"
