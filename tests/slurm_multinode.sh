#!/bin/sh
# Multi-node resource sampling on a two-node cluster made of namespaces
# (scripts/slurm-netns.sh): nodes pdnode1 and pdnode2, each a network + UTS
# namespace with its own address and hostname and its own slurmd.
#   1. SLURM: a `paddiser bench` study (executor slurm) whose job spans both
#      nodes (#SBATCH --nodes=2); the probe block starts the other node's
#      samplers with `srun --overlap`;
#   2. OAR: the same study run by the local executor on pdnode1 with
#      OAR_NODEFILE naming both nodes and a stub `oarsh` that runs the
#      command in the named node's namespaces;
#   3. PBS: likewise with PBS_NODEFILE and a stub `ssh`.
# Each checks: CPU and GPU traces named after both hostnames, nodes_traced = 2
# in the run summary, per-host GPU labels from a stub nvidia-smi that shows
# one GPU on pdnode1 and two on pdnode2 (gpu_count = 3).
# The test first enters new network, UTS, mount and PID namespaces of its
# own; the bridge, the veth pairs and the hostnames exist only there and the
# host's network configuration is never touched. Needs root, iproute2,
# slurm-wlm and munge: `make check-slurm` sets PADDISER_CHECK_SLURM=1 and
# runs it; in the unit suite it skips. Where the kernel refuses the
# namespaces or the links it skips with a message.
set -eu
if [ "${PADDISER_CHECK_SLURM:-}" != 1 ]; then
    echo "slurm_multinode: SKIP (run by make check-slurm)"; exit 0
fi
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PD=$(cd "$BUILD" && pwd)/paddiser
NS=$ROOT/scripts/slurm-netns.sh

if [ "${PADDISER_NETNS_OUTER:-}" != 1 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "slurm_multinode: SKIP (needs root for namespaces and slurmd)"; exit 0; }
    for b in unshare nsenter ip; do
        command -v $b >/dev/null 2>&1 || { echo "slurm_multinode: FAIL: $b not found (scripts/install-deps.sh iproute2)" >&2; exit 1; }
    done
    if ! err=$(unshare --net --uts --mount --pid --fork --mount-proc \
        sh -c 'hostname pdprobe && ip link add pdbr0 type bridge && ip link add pdv0 type veth peer name pdv1' 2>&1); then
        echo "slurm_multinode: SKIP (the kernel refuses new network/UTS/mount/PID namespaces or a bridge/veth in them: $err)"
        exit 0
    fi
    W=$(mktemp -d /tmp/paddiser-check-multinode.XXXXXX)
    chmod 0711 "$W" # munged (the munge user) reaches its socket below
    trap 'rm -rf "$W"' EXIT
    rc=0
    # the PID namespace ends with this test: every daemon in it goes too
    PADDISER_HOST_NETNS=$(readlink /proc/self/ns/net) PADDISER_NETNS_OUTER=1 PADDISER_MN_DIR=$W BUILD=$BUILD \
        unshare --net --uts --mount --pid --fork --mount-proc sh "$ROOT/tests/slurm_multinode.sh" || rc=$?
    # nothing of it is left in the host's namespaces
    if ip link show pdbr0 >/dev/null 2>&1 || [ "$(uname -n)" = pdctl ] || grep -q pdnode /etc/hosts; then
        echo "slurm_multinode: FAIL: the test's bridge, hostname or hosts entries leaked to the host" >&2; exit 1
    fi
    exit $rc
fi

# --- inside the test's own namespaces ---
W=$PADDISER_MN_DIR
export PADDISER_SLURM_DIR=$W/slurm
trap '"$NS" stop' EXIT
fail() { echo "slurm_multinode: FAIL: $*" >&2; exit 1; }
"$NS" start
export SLURM_CONF=$PADDISER_SLURM_DIR/etc/slurm.conf
unset SLURM_JOB_ID OAR_NODEFILE PBS_NODEFILE

# stub nvidia-smi: its GPUs depend on the node it runs on
mkdir -p "$W/bin"
cat >"$W/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case $(uname -n) in
pdnode1) echo "0, NVIDIA A100-SXM4-80GB, 85, 40, 30000, 81920, 62, 250.50, 1410, 1215";;
pdnode2) echo "0, NVIDIA H100 80GB HBM3, 50, 20, 1000, 81559, 40, 100.00, 1980, 2619"
         echo "1, NVIDIA H100 80GB HBM3, 10, 5, 500, 81559, 35, 90.00, 1980, 2619";;
*) echo "No devices were found"; exit 6;;
esac
EOF
# stub oarsh and ssh: run the command in the named node's namespaces
cat >"$W/bin/oarsh" <<EOF
#!/bin/sh
h=\$1; shift
echo "oarsh \$h \$*" >>"$W/remote.log"
exec "$NS" exec "\$h" sh -c "\$*"
EOF
cat >"$W/bin/ssh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -o) shift 2;; -*) shift;; *) break;; esac; done
h=\$1; shift
echo "ssh \$h \$*" >>"$W/remote.log"
exec "$NS" exec "\$h" sh -c "\$*"
EOF
chmod 0755 "$W/bin/nvidia-smi" "$W/bin/oarsh" "$W/bin/ssh"
export PATH="$W/bin:$PATH"

# study EXECUTOR WORKDIR: two repetitions of a script that runs 1.5 s
study() {
    cat <<EOF
benchmark:
  name: multinode
  workdir: $2
  repetitions: 2
  executor: $1
  probes: {resource_sampling: true, gpu_sampling: true, sampling_interval: 0.2}
  slurm_options: {poll_interval: 0.2}
vars:
  n: {type: int, sweep: {mode: list, values: [1]}}
command: {template: "sleep 1.5"}
scripts:
  - name: span
    script_template: |
      #!/bin/sh
      #SBATCH --nodes=2
      #SBATCH --ntasks-per-node=1
      echo "host=\$(uname -n)" > where.txt
      {{ command.template }}
    parser: {file: where.txt, metrics: [{name: host}]}
EOF
}

# value of column $2 in row $3 (1 = first data row) of CSV $1 (no quoted commas there)
col() {
    awk -F, -v c="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
        NR == r + 1 { if (k) print $k; exit }' "$1"
}

# check RUNDIR LABEL: both hosts traced in every repetition
check_run() {
    R=$1
    S=$R/__iops_resource_summary.csv
    [ -f "$S" ] || fail "$2: no run summary $S"
    [ "$(tail -n +2 "$S" | wc -l)" -eq 2 ] || { cat "$S"; fail "$2: expected 2 summary rows"; }
    for rep in 1 2; do
        d=$R/exec_0001/repetition_00$rep
        for h in pdnode1 pdnode2; do
            ls "$d"/__iops_trace_${h}_*.csv >/dev/null 2>&1 || { ls "$d"; fail "$2: rep $rep: no CPU trace of $h"; }
            ls "$d"/__iops_gpu_trace_${h}_*.csv >/dev/null 2>&1 || { ls "$d"; fail "$2: rep $rep: no GPU trace of $h"; }
        done
        [ "$(col "$S" nodes_traced $rep)" = 2 ] || { cat "$S"; fail "$2: rep $rep: nodes_traced is not 2"; }
        [ "$(col "$S" gpu_count $rep)" = 3 ] || { cat "$S"; fail "$2: rep $rep: gpu_count is not 3"; }
        for g in pdnode1_gpu0 pdnode2_gpu0 pdnode2_gpu1; do
            v=$(col "$S" ${g}_avg_utilization_pct $rep)
            [ -n "$v" ] || { head -n 1 "$S"; fail "$2: rep $rep: no $g label"; }
        done
        [ "$(col "$S" pdnode1_gpu0_avg_utilization_pct $rep)" = 85.00 ] &&
            [ "$(col "$S" pdnode2_gpu1_avg_utilization_pct $rep)" = 10.00 ] ||
            { cat "$S"; fail "$2: rep $rep: GPU values not those of the node's stub"; }
        # the script itself ran on pdnode1 (the batch host / the node we entered)
        grep -q '^host=pdnode1$' "$d/where.txt" || fail "$2: script ran on $(cat "$d/where.txt")"
    done
}

# 1. SLURM: one job over both nodes, the other node's samplers by srun --overlap
study slurm "$W/wd-slurm" >"$W/slurm.yaml"
"$PD" bench "$W/slurm.yaml" -q >/dev/null || fail "slurm study failed"
check_run "$W/wd-slurm/run_001" slurm
grep -q '"executor": "slurm"' "$W/wd-slurm/run_001/exec_0001/repetition_001/__iops_status.json" || fail "not a slurm job"
[ ! -e "$W/remote.log" ] || fail "slurm run used oarsh/ssh: $(cat "$W/remote.log")"
# pdnode2's samplers came as job steps asked for from pdnode1, two per
# repetition (the CPU and the GPU wrapper; the script runs no srun itself:
# these are the probe's srun --overlap)
L=$PADDISER_SLURM_DIR/log/slurmd.pdnode2.log
n=$(grep -c 'launch task StepId=[0-9]*\.[01] request from .*HOST:10\.77\.0\.11 ' "$L" || true)
m=$(grep -c 'launch task StepId=' "$L" || true)
[ "$n" -eq 4 ] && [ "$m" -eq 4 ] || { cat "$L"; fail "pdnode2: $n steps from pdnode1 ($m in all), expected 4"; }
echo "slurm_multinode: slurm ok"

# 2./3. OAR and PBS: the local executor on pdnode1, node files naming both
printf 'pdnode1\npdnode1\npdnode2\npdnode2\n' >"$W/nodefile"
for s in oar pbs; do
    study local "$W/wd-$s" >"$W/$s.yaml"
    var=OAR_NODEFILE; rsh=oarsh
    [ $s = pbs ] && { var=PBS_NODEFILE; rsh=ssh; }
    : >"$W/remote.log"
    "$NS" exec pdnode1 env "$var=$W/nodefile" "$PD" bench "$W/$s.yaml" -q >/dev/null || fail "$s study failed"
    check_run "$W/wd-$s/run_001" $s
    # per repetition one launch per sampler (CPU, GPU), to pdnode2 only,
    # through the scheduler's remote shell
    [ "$(grep -c "^$rsh pdnode2 sh '[^']*/__iops_runtime_sampler.sh' " "$W/remote.log")" -eq 2 ] &&
        [ "$(grep -c "^$rsh pdnode2 sh '[^']*/__iops_runtime_gpu_sampler.sh' " "$W/remote.log")" -eq 2 ] &&
        [ "$(wc -l <"$W/remote.log")" -eq 4 ] ||
        { cat "$W/remote.log"; fail "$s: expected four $rsh launches to pdnode2"; }
    echo "slurm_multinode: $s ok"
done
echo "slurm_multinode: ok (SLURM, OAR and PBS jobs over pdnode1 + pdnode2: nodes_traced = 2, GPUs pdnode1_gpu0, pdnode2_gpu0, pdnode2_gpu1)"
