#!/bin/sh
# __iops_node_launcher.sh against stub scontrol/srun/oarsh/ssh that record
# their arguments (oarsh/ssh also run the remote command here, which checks
# its quoting): SLURM, OAR and PBS node lists, the local node always sampled
# and never twice, remote failures ignored.
set -u
BUILD=${BUILD:-build}
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
T=$(mktemp -d /tmp/paddiser_probe_launcher.XXXXXX)
cleanup() { rm -rf "$T"; }
fail() { echo "FAIL: $*"; cleanup; exit 1; }

W="$T/dir x'y"            # a run directory that needs quoting
mkdir -p "$W" "$T/bin" "$T/bin2" || fail mkdir
"$PROBE" block --launcher >"$T/launcher.sh" || fail "launcher text"
grep -q 'srun --overlap' "$T/launcher.sh" || fail "launcher not extracted"

# The sampler wrapper stand-in: logs its arguments.
cat >"$W/wrap.sh" <<EOF
#!/bin/sh
echo "ran \$*" >>"$T/wrap.log"
EOF
cat >"$T/bin/scontrol" <<EOF
#!/bin/sh
echo "\$*" >>"$T/scontrol.args"
printf '%s\n' \$STUB_NODES
EOF
# Like Slurm, the stub takes the task count from --ntasks, else from the
# job's SLURM_NTASKS (set by sbatch --ntasks), else one per node; it logs it.
cat >"$T/bin/srun" <<EOF
#!/bin/sh
echo "\$*" >>"$T/srun.args"
tasks=\${SLURM_NTASKS:-}
for o; do
    case \$o in --ntasks=*) tasks=\${o#--ntasks=} ;; --nodes=*) [ -n "\$tasks" ] || tasks=\${o#--nodes=} ;; esac
done
echo "\$tasks" >>"$T/srun.tasks"
exit \${STUB_SRUN_EXIT:-0}
EOF
cat >"$T/bin/oarsh" <<EOF
#!/bin/sh
echo "\$*" >>"$T/oarsh.args"
h=\$1; shift
sh -c "\$*"
EOF
cat >"$T/bin/ssh" <<EOF
#!/bin/sh
echo "\$*" >>"$T/ssh.args"
for last; do :; done
sh -c "\$last"
EOF
chmod +x "$T"/bin/*
cp "$T/bin/scontrol" "$T/bin/srun" "$T/bin2/"   # bin2: no oarsh, no ssh

self=$(uname -n)
running() { # alive, not a zombie waiting for its reaper, and still ours:
    # with pid_max at 32768 (this VM) a busy CI wraps the PID space, and a
    # PID whose process ended can be another's by the time it is asked
    # about (check-fresh failed twice on "still runs after 20 s"). What the
    # launcher starts runs a script under $T.
    kill -0 "$1" 2>/dev/null || return 1
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    case $st in *") Z "*) return 1 ;; esac
    cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null) || return 0
    case $cmd in *"$T"*) return 0 ;; *) return 1 ;; esac
}
# Runs the launcher in a clean scheduler environment plus the given
# assignments; waits for what it started (it prints their PIDs).
launch() {
    rm -f "$T"/*.args "$T/srun.tasks" "$T/wrap.log"
    pids=$(env -u SLURM_JOB_ID -u SLURM_JOB_NODELIST -u SLURMD_NODENAME -u SLURM_NTASKS -u OAR_NODEFILE -u PBS_NODEFILE \
        PATH="${STUB_PATH:-$T/bin}:$PATH" "$@" sh "$T/launcher.sh" "$W/wrap.sh" att ${REMOTE_ONLY:+""} ${REMOTE_ONLY:-999}) ||
        fail "launcher failed: $*"
    for p in $pids; do # 20 s each at most: a hang guard, not a deadline
        i=0
        while running "$p" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
        ! running "$p" || fail "what the launcher started (PID $p) still runs after 20 s: $*"
    done
    npids=$(echo $pids | wc -w)
}
expect() { # FILE EXPECTED-CONTENT
    got=$(cat "$1" 2>/dev/null | sort)
    want=$(printf '%s\n' "$2" | sort)
    [ "$got" = "$want" ] || fail "$(basename "$1"): got [$got] want [$want]"
}

# SLURM: three nodes, this one named by SLURMD_NODENAME; the job was
# submitted with --ntasks=64, which srun must not inherit for the samplers.
launch SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURMD_NODENAME=n1 STUB_NODES="n1 n2 n3" SLURM_NTASKS=64
expect "$T/scontrol.args" "show hostnames n[1-3]"
expect "$T/srun.args" "--overlap --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=n2,n3 sh $W/wrap.sh att"
expect "$T/srun.tasks" "2"
expect "$T/wrap.log" "ran att 999"
[ "$npids" = 2 ] || fail "slurm: $npids pids printed"

# SLURM without SLURMD_NODENAME: this node recognised by its hostname.
launch SLURM_JOB_ID=42 SLURM_JOB_NODELIST=x STUB_NODES="nodeZ $self"
expect "$T/srun.args" "--overlap --nodes=1 --ntasks=1 --ntasks-per-node=1 --nodelist=nodeZ sh $W/wrap.sh att"

# SLURM single node: no srun at all.
launch SLURM_JOB_ID=42 SLURM_JOB_NODELIST=x STUB_NODES="$self"
[ ! -e "$T/srun.args" ] || fail "srun called for a single-node job"
expect "$T/wrap.log" "ran att 999"

# srun failing: ignored, the local sampler still runs.
launch SLURM_JOB_ID=42 SLURM_JOB_NODELIST=x STUB_NODES="$self n9" STUB_SRUN_EXIT=1
expect "$T/wrap.log" "ran att 999"

# OAR: one line per core in the node file, this node included.
printf '%s\n' "$self" "$self" nodeA nodeA nodeA nodeB >"$T/oar_nodes"
launch OAR_NODEFILE="$T/oar_nodes"
q="'$T/dir x'\\''y/wrap.sh'"
expect "$T/oarsh.args" "nodeA sh $q 'att'
nodeB sh $q 'att'"
expect "$T/wrap.log" "ran att 999
ran att
ran att"

# PBS: ssh in batch mode.
printf '%s\n' nodeC "$self" nodeC >"$T/pbs_nodes"
launch PBS_NODEFILE="$T/pbs_nodes"
expect "$T/ssh.args" "-o BatchMode=yes nodeC sh $q 'att'"
expect "$T/wrap.log" "ran att 999
ran att"

# --remote-only (paddiser-probe start forks this node's sampler itself): the
# other nodes only, this one not started a second time.
REMOTE_ONLY=--remote-only launch OAR_NODEFILE="$T/oar_nodes"
expect "$T/oarsh.args" "nodeA sh $q 'att'
nodeB sh $q 'att'"
expect "$T/wrap.log" "ran att
ran att"
[ "$npids" = 2 ] || fail "remote-only: $npids pids printed"
REMOTE_ONLY=--remote-only launch SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-2]' SLURMD_NODENAME=n1 STUB_NODES="n1 n2"
expect "$T/srun.args" "--overlap --nodes=1 --ntasks=1 --ntasks-per-node=1 --nodelist=n2 sh $W/wrap.sh att"
[ ! -e "$T/wrap.log" ] || fail "remote-only: this node sampled: $(cat "$T/wrap.log")"

# No remote shell on PATH: local only, no error.
STUB_PATH=$T/bin2 launch OAR_NODEFILE="$T/oar_nodes"
expect "$T/wrap.log" "ran att 999"

# No scheduler: local only.
launch
expect "$T/wrap.log" "ran att 999"
[ "$npids" = 1 ] || fail "no scheduler: $npids pids printed"

cleanup
echo "probe_launcher: ok"
