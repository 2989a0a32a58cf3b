#!/bin/sh
# How a sampler stops (issue #18): every sampler here runs with a one-hour
# interval, so only an event can end its sleep, never a poll or a due sample.
# Each stop must still leave the closing sample: the first sample is only the
# baseline, so the rows found (one per cpuN line) are the closing sample's.
#   1. SIGUSR1 (what the block's exit handler sends: the run is over): this
#      attempt's sentinels, every kind, removed; SIGTERM: only this sampler
#      stops, the sentinel stays
#   2. the sentinel removed (inotify), no signal
#   3. the --watch-pid process exiting (pidfd)
#   4. start + stop as the block runs them: when stop returns, the sampler has
#      exited and its rows are in the file (stop waited for it, not a poll)
#   5. a real run script with the block: the trace holds the closing sample
#      once the script has returned
#   6. the same with the paddiser-probe binary deleted while the script runs:
#      on one node the exit handler needs no process (SIGUSR1 and a read of
#      the samplers' pipe), so the sentinel still goes and the closing sample
#      is still there when the script returns
#   7. start in a multi-node job (an OAR node file naming another host, a stub
#      oarsh): the launcher runs for the other node only, its PID follows '+',
#      and stop waits for it; a one-node SLURM job runs no launcher
#   8. a run script that ends at once (the membw example's smallest case runs
#      in ~17 ms): it still has its trace with the closing sample (start
#      returns after the sampler's baseline, and a stop before the first row
#      waits the 0.02 s a closing sample needs; check-slurm once found none)
# No durations are asserted: the waits below are bounded only so that a
# broken stop fails instead of hanging.
set -u
BUILD=${BUILD:-build}
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
STUBS=$(cd "${TESTS_DIR:-$(dirname "$0")}" && pwd)/fixtures/probe/bin
T=$(mktemp -d /tmp/paddiser_probe_stop.XXXXXX)
D=$T/rep
mkdir "$D"
bg=
cleanup() {
    for p in $bg; do kill "$p" 2>/dev/null; done
    rm -rf "$T"
}
fail() { echo "probe_stop: FAIL: $*"; cleanup; exit 1; }
cores=$(grep -c '^cpu[0-9]' /proc/stat)
host=$(uname -n | cut -d. -f1)
rows() { [ -f "$1" ] && tail -n +2 "$1" | wc -l || echo 0; }
alive() { # not gone, not a zombie
    kill -0 "$1" 2>/dev/null || return 1
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    case $st in *") Z "* | *") X "*) return 1 ;; esac
}
# Waits (at most 20 s) until PID sleeps in its loop: it holds its inotify
# descriptor and is asleep; then 0.1 s more, so the closing sample has new
# time behind it (a sampler skips one within 0.02 s of the baseline).
wait_sleeping() {
    i=0
    while [ $i -lt 400 ]; do
        if ls -l "/proc/$1/fd" 2>/dev/null | grep -q inotify &&
            case $(cat "/proc/$1/stat" 2>/dev/null) in *") S "*) true ;; *) false ;; esac; then
            sleep 0.1
            return 0
        fi
        sleep 0.05
        i=$((i + 1))
    done
    fail "$2: sampler $1 never went to sleep"
}
wait_gone() { # PID WHAT: bounded wait for the sampler's exit
    i=0
    while alive "$1" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    alive "$1" && fail "$2: the sampler did not stop"
    return 0
}
# TRACE WHAT T0: the closing sample's rows, each stamped after T0
closing_sample() {
    [ "$(rows "$1")" -eq "$cores" ] || fail "$2: $(rows "$1") rows, want the closing sample's $cores"
    tail -n +2 "$1" | awk -F, -v t0="$3" '$1 + 0 < t0 + 0 { bad = 1 } END { exit bad }' ||
        fail "$2: a row stamped before the sampler started: $(cat "$1")"
    [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] || fail "$2: the trace ends mid-row"
}
now() { date +%s.%N; }

# --- 1. SIGUSR1, SIGTERM ---
touch "$D/__iops_trace_running.s1" "$D/__iops_gpu_trace_running.s1" "$D/__iops_io_trace_running.s1" \
    "$D/__iops_trace_running.s1x"
t0=$(now)
"$PROBE" cpu --dir "$D" --attempt s1 --interval 3600 &
p=$!; bg="$bg $p"
wait_sleeping "$p" "SIGUSR1"
kill -USR1 "$p"
wait "$p"; rc=$?
[ "$rc" = 0 ] || fail "SIGUSR1: exit status $rc"
closing_sample "$D/__iops_trace_${host}_s1.csv" "SIGUSR1" "$t0"
for s in __iops_trace_running __iops_gpu_trace_running __iops_io_trace_running; do
    [ ! -e "$D/$s.s1" ] || fail "SIGUSR1: sentinel $s.s1 left"
done
[ -e "$D/__iops_trace_running.s1x" ] || fail "SIGUSR1: another attempt's sentinel removed"
touch "$D/__iops_trace_running.s1t"
t0=$(now)
"$PROBE" cpu --dir "$D" --attempt s1t --interval 3600 &
p=$!; bg="$bg $p"
wait_sleeping "$p" "SIGTERM"
kill -TERM "$p"
wait "$p"; rc=$?
[ "$rc" = 0 ] || fail "SIGTERM: exit status $rc"
closing_sample "$D/__iops_trace_${host}_s1t.csv" "SIGTERM" "$t0"
[ -e "$D/__iops_trace_running.s1t" ] || fail "SIGTERM: the sampler removed its sentinel"

# --- 2. sentinel removed ---
touch "$D/__iops_trace_running.s2" "$D/__iops_trace_running.other"
t0=$(now)
"$PROBE" cpu --dir "$D" --attempt s2 --interval 3600 &
p=$!; bg="$bg $p"
wait_sleeping "$p" "sentinel"
rm "$D/__iops_trace_running.other" # another attempt's sentinel: no stop
sleep 0.2
alive "$p" || fail "sentinel: another attempt's sentinel stopped the sampler"
rm "$D/__iops_trace_running.s2"
wait_gone "$p" "sentinel"
wait "$p" || fail "sentinel: exit status $?"
closing_sample "$D/__iops_trace_${host}_s2.csv" "sentinel" "$t0"

# --- 3. --watch-pid exits ---
touch "$D/__iops_trace_running.s3"
sleep 3600 &
w=$!; bg="$bg $w"
t0=$(now)
"$PROBE" cpu --dir "$D" --attempt s3 --interval 3600 --watch-pid "$w" &
p=$!; bg="$bg $p"
wait_sleeping "$p" "watch-pid"
kill "$w"
wait "$w" 2>/dev/null
wait_gone "$p" "watch-pid"
closing_sample "$D/__iops_trace_${host}_s3.csv" "watch-pid" "$t0"

# --- 4. start, then stop ---
sleep 3600 &
w=$!; bg="$bg $w"
t0=$(now)
pids=$("$PROBE" start --dir "$D" --attempt s4 --cpu --interval 3600 --watch-pid "$w" </dev/null) ||
    fail "start: exit $?"
[ "$(echo $pids | wc -w)" = 1 ] || fail "start printed '$pids', want one PID"
[ -f "$D/__iops_trace_running.s4" ] || fail "start: no sentinel"
[ -x "$D/__iops_node_launcher.sh" ] && [ -x "$D/__iops_runtime_sampler.sh" ] || fail "start: wrappers missing"
wait_sleeping "$pids" "start/stop"
"$PROBE" stop --dir "$D" --attempt s4 --cpu $pids || fail "stop: exit $?"
# no waiting here: stop returns only once the sampler has exited
alive "$pids" && fail "stop returned before the sampler exited"
[ ! -e "$D/__iops_trace_running.s4" ] || fail "stop: sentinel left"
closing_sample "$D/__iops_trace_${host}_s4.csv" "start/stop" "$t0"
# stop leaves alone a PID that is not a sampler of this attempt
"$PROBE" stop --dir "$D" --attempt s4 --cpu "$w" || fail "stop with a foreign PID: exit $?"
alive "$w" || fail "stop signalled a process that is not its sampler"
kill "$w"

# --- 5. a run script with the block ---
"$PROBE" block --dir "$D" --cpu --interval 3600 >"$T/block" || fail "block"
{ echo '#!/bin/sh'; cat "$T/block"; echo 'sleep 1'; echo 'exit 5'; } >"$T/run.sh"
t0=$(now)
IOPS_ATTEMPT_ID=s5 sh "$T/run.sh"; rc=$?
[ "$rc" = 5 ] || fail "run script: exit status $rc, want 5"
closing_sample "$D/__iops_trace_${host}_s5.csv" "run script" "$t0"
[ ! -e "$D/__iops_trace_running.s5" ] || fail "run script: sentinel left"

# --- 6. the exit handler on its own ---
mkdir "$T/bin"
cp "$PROBE" "$T/bin/paddiser-probe"
"$PROBE" block --dir "$D" --cpu --gpu --interval 3600 --probe "$T/bin/paddiser-probe" >"$T/block6" || fail "block6"
{ echo '#!/bin/sh'; cat "$T/block6"; echo "sleep 1; rm '$T/bin/paddiser-probe'"; } >"$T/run6.sh"
t0=$(now)
PATH="$STUBS:$PATH" IOPS_ATTEMPT_ID=s6 sh "$T/run6.sh" ||
    fail "run6: exit $?"
[ ! -e "$T/bin/paddiser-probe" ] || fail "run6: the binary was not removed"
closing_sample "$D/__iops_trace_${host}_s6.csv" "no stop command" "$t0"
for s in __iops_trace_running __iops_gpu_trace_running; do
    [ ! -e "$D/$s.s6" ] || fail "no stop command: sentinel $s.s6 left"
done

# --- 7. multi-node start ---
mkdir "$T/stubs"
cat >"$T/stubs/oarsh" <<EOF
#!/bin/sh
echo "\$*" >>"$T/oarsh.args"
exit 0
EOF
chmod +x "$T/stubs/oarsh"
printf '%s\n' "$(uname -n)" nodeB >"$T/nodes"
out=$(env -u SLURM_JOB_ID -u PBS_NODEFILE OAR_NODEFILE="$T/nodes" PATH="$T/stubs:$PATH" \
    "$PROBE" start --dir "$D" --attempt m1 --cpu --interval 3600 </dev/null) || fail "multi-node start: exit $?"
case $out in *+*) ;; *) fail "multi-node start: no remote launch in '$out'" ;; esac
local_pid=${out%%+*}
i=0
while [ ! -s "$T/oarsh.args" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
grep -qx "nodeB sh '$D/__iops_runtime_sampler.sh' 'm1'" "$T/oarsh.args" ||
    fail "multi-node start: oarsh got: $(cat "$T/oarsh.args" 2>/dev/null)"
"$PROBE" stop --dir "$D" --attempt m1 --cpu $out || fail "multi-node stop: exit $?"
for p in $local_pid; do alive "$p" && fail "multi-node stop returned before the sampler exited"; done
[ ! -e "$D/__iops_trace_running.m1" ] || fail "multi-node stop: sentinel left"
out=$(env -u OAR_NODEFILE -u PBS_NODEFILE SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n1 SLURM_JOB_NUM_NODES=1 \
    "$PROBE" start --dir "$D" --attempt m2 --cpu --interval 3600 </dev/null) || fail "one-node start: exit $?"
case $out in *+*) fail "one-node SLURM job: a launcher ran ('$out')" ;; esac
"$PROBE" stop --dir "$D" --attempt m2 --cpu $out || fail "one-node stop: exit $?"

# --- 8. a run that ends at once ---
{ echo '#!/bin/sh'; cat "$T/block"; echo 'exit 0'; } >"$T/run8.sh"
t0=$(now)
IOPS_ATTEMPT_ID=s8 sh "$T/run8.sh" || fail "run8: exit $?"
closing_sample "$D/__iops_trace_${host}_s8.csv" "a run that ends at once" "$t0"
[ ! -e "$D/__iops_trace_running.s8" ] || fail "run8: sentinel left"

cleanup
echo "probe_stop: ok"
