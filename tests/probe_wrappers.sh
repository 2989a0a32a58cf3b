#!/bin/sh
# Real runs of the injected probe block (paddiser-probe block prints it):
# a script starts the samplers, sleeps and exits; then the sentinels must be
# gone, the traces present, the exit status kept and no sampler left. Also:
# set -eu scripts, a script killed by SIGKILL (samplers stop through
# --watch-pid), and two concurrent attempts that must not stop each other.
set -u
BUILD=${BUILD:-build}
TESTS_DIR=$(cd "${TESTS_DIR:-tests}" && pwd)
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
T=$(mktemp -d /tmp/paddiser_probe_wrappers.XXXXXX)
STUBS=$TESTS_DIR/fixtures/probe/bin
# No NVML: the stub nvidia-smi is the GPU source even where a driver is installed.
export PADDISER_NVML_LIB="$TESTS_DIR/fixtures/probe/no-libnvidia-ml.so.1"

# Process lookups read /proc directly (no procps needed). The pattern sits in
# a file whose name does not contain $T, so grep never finds itself.
PAT=$(mktemp /tmp/paddiser_pattern.XXXXXX)
printf '%s\n' "$T" >"$PAT"
# PIDs of processes whose command line names our scratch dir (zombies have
# none, so they do not count).
leftovers() {
    grep -l -F -f "$PAT" /proc/[0-9]*/cmdline 2>/dev/null | sed -n 's,^/proc/\([0-9]*\)/cmdline$,\1,p' |
        grep -vx "$$" || true
}
# PIDs among leftovers whose command line (spaces for NULs) holds $1.
procs_with() {
    for p in $(leftovers); do
        case " $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" in *"$1"*) echo "$p" ;; esac
    done
}
nice_of() { # field 19 of /proc/PID/stat
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    set -- ${st##*) }
    echo "${17}"
}
child_of() { # PID of the child of $1 named $2
    grep -l "^[0-9]* ($2) . $1 " /proc/[0-9]*/stat 2>/dev/null | sed -n 's,^/proc/\([0-9]*\)/stat$,\1,p' | head -1
}
cleanup() {
    for p in $(leftovers); do kill "$p" 2>/dev/null; done
    rm -rf "$T" "$PAT"
}
fail() { echo "FAIL: $*"; cleanup; exit 1; }
# Waits up to 2 s for our processes to be gone (the kernel may be slow to
# reap orphans here), then fails if any is left.
no_leftovers() {
    i=0
    while [ -n "$(leftovers)" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
    [ -z "$(leftovers)" ] || fail "$1: processes left: $(leftovers | tr '\n' ' ')"
}
rows() { [ -f "$1" ] && tail -n +2 "$1" | wc -l || echo 0; }

mkdir -p "$T/rep" || fail "mkdir"
"$PROBE" block --dir "$T/rep" --cpu --gpu --io-path "$T/rep/out" --io-path /dev/shm/paddiser_probe_x \
    --interval 0.1 >"$T/block" || fail "block generation"

# --- 1. dash, all three samplers, exit status 3 kept ---
# The user's part waits until the traces hold the rows checked below (up to
# 10 s), not a fixed time: the samplers run at nice 19 and the GPU one takes
# no closing sample, so on a loaded machine 0.8 s was not always three GPU
# rows.
{
    echo '#!/bin/sh'
    cat "$T/block"
    echo "n() { tail -q -n +2 \"$T\"/rep/\$1 2>/dev/null | wc -l; }"
    echo 'i=0'
    echo 'while [ $i -lt 200 ] && { [ "$(n "__iops_trace_*_t1.csv")" -lt 2 ] ||'
    echo '    [ "$(n "__iops_gpu_trace_*_t1.csv")" -lt 3 ] || [ "$(n "__iops_io_trace_*_t1.csv")" -lt 1 ]; }; do'
    echo '    sleep 0.05; i=$((i + 1))'
    echo 'done'
    echo 'echo user-output'
    echo 'exit 3'
} >"$T/run.sh"
out=$(PATH="$STUBS:$PATH" IOPS_ATTEMPT_ID=t1 sh "$T/run.sh" 2>"$T/err1"); rc=$?
[ "$rc" = 3 ] || fail "exit status 3 not kept (got $rc)"
[ "$out" = user-output ] || fail "the block wrote to stdout: '$out'"
for s in __iops_trace_running __iops_gpu_trace_running __iops_io_trace_running; do
    [ ! -e "$T/rep/$s.t1" ] || fail "sentinel $s.t1 left behind"
done
for w in __iops_runtime_sampler.sh __iops_runtime_gpu_sampler.sh __iops_runtime_io_sampler.sh __iops_node_launcher.sh; do
    [ -x "$T/rep/$w" ] || fail "wrapper $w missing"
done
cpu=$(ls "$T"/rep/__iops_trace_*_t1.csv 2>/dev/null)
gpu=$(ls "$T"/rep/__iops_gpu_trace_*_t1.csv 2>/dev/null)
io=$(ls "$T"/rep/__iops_io_trace_*_t1.csv 2>/dev/null)
[ -n "$cpu" ] && [ -n "$gpu" ] && [ -n "$io" ] || fail "traces missing: $(ls "$T/rep")"
ls "$T"/rep/__iops_io_targets_*_t1.json >/dev/null 2>&1 || fail "io targets json missing"
head -1 "$cpu" | grep -qx 'timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb' ||
    fail "cpu header"
[ "$(rows "$cpu")" -ge 2 ] || fail "cpu trace has $(rows "$cpu") rows"
[ "$(rows "$gpu")" -ge 3 ] || fail "gpu trace has $(rows "$gpu") rows"
[ "$(rows "$io")" -ge 1 ] || fail "io trace has $(rows "$io") rows"
grep -q 'warning: io path /dev/shm/paddiser_probe_x is on ' "$T/err1" || fail "no tmpfs warning: $(cat "$T/err1")"
no_leftovers "dash run"

# --- 2. bash -eu, failing user command: status 1 kept, clean stop ---
{ echo '#!/bin/bash'; cat "$T/block"; echo 'sleep 0.3'; echo 'false'; echo 'echo unreachable'; } >"$T/run2.sh"
out=$(IOPS_ATTEMPT_ID=t2 bash -eu "$T/run2.sh" 2>/dev/null); rc=$?
[ "$rc" = 1 ] && [ -z "$out" ] || fail "bash -eu: rc=$rc out='$out'"
[ ! -e "$T/rep/__iops_trace_running.t2" ] || fail "bash -eu: sentinel left"
ls "$T"/rep/__iops_trace_*_t2.csv >/dev/null 2>&1 || fail "bash -eu: no cpu trace"
ls "$T"/rep/__iops_gpu_trace_*_t2.csv >/dev/null 2>&1 && fail "gpu trace without nvidia-smi"
no_leftovers "bash -eu run"

# --- 3. SIGKILLed script: no exit handler, samplers stop on --watch-pid ---
{ echo '#!/bin/sh'; cat "$T/block"; echo 'sleep 3'; } >"$T/run3.sh"
IOPS_ATTEMPT_ID=t3 sh "$T/run3.sh" 2>/dev/null &
sh_pid=$!
sleep 0.5
user_sleep=$(child_of "$sh_pid" sleep)
kill -KILL "$sh_pid"
wait "$sh_pid" 2>/dev/null
[ -n "$user_sleep" ] && kill "$user_sleep" 2>/dev/null
no_leftovers "killed script"
rm -f "$T"/rep/*running.t3

# --- 4. two concurrent attempts in one directory ---
{ echo '#!/bin/sh'; cat "$T/block"; echo 'sleep "$1"'; } >"$T/conc.sh"
IOPS_ATTEMPT_ID=a1 sh "$T/conc.sh" 0.5 2>/dev/null &
p1=$!
IOPS_ATTEMPT_ID=a2 sh "$T/conc.sh" 30 2>/dev/null &
p2=$!
wait "$p1"
[ ! -e "$T/rep/__iops_trace_running.a1" ] || fail "a1 sentinel left"
[ -e "$T/rep/__iops_trace_running.a2" ] || fail "a1's exit removed a2's sentinel"
# a2's trace appears with its first row: 10 s for it too
i=0
while a2=$(ls "$T"/rep/__iops_trace_*_a2.csv 2>/dev/null); [ -z "$a2" ] && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
done
[ -n "$a2" ] || fail "a2 wrote no trace in 10 s"
n1=$(rows "$a2")
# a2 samples every 0.1 s and flushes within 0.25 s; at nice 19 on a loaded
# machine a wake-up can lag, so its next rows get up to 10 s to come
i=0
while n2=$(rows "$a2") && [ "$n2" -le "$n1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ "$n2" -gt "$n1" ] || fail "a2 stopped sampling when a1 exited ($n1 -> $n2 rows in 10 s)"
a2_pid=$(procs_with "$T/rep --attempt a2 " | head -1)
[ -n "$a2_pid" ] || fail "a2 sampler gone"
[ "$(nice_of "$a2_pid")" = 19 ] || fail "sampler not at nice 19 (nice $(nice_of "$a2_pid"))"
# the user's sleep ends early; a2 then exits as any script does
a2_sleep=$(child_of "$p2" sleep)
[ -n "$a2_sleep" ] || fail "a2's sleep not found"
kill "$a2_sleep"
wait "$p2"
[ ! -e "$T/rep/__iops_trace_running.a2" ] || fail "a2 sentinel left"
ls "$T"/rep/__iops_trace_*_a1.csv >/dev/null 2>&1 || fail "a1 trace missing"
no_leftovers "concurrent attempts"

# --- 5. unwritable trace directory: the benchmark runs as if unprobed ---
"$PROBE" block --dir "$T/missing/dir" --cpu --io-path /tmp --interval 0.1 >"$T/block5" || fail "block5"
for shell in sh bash; do
    { echo '#!/bin/sh'; cat "$T/block5"; echo 'echo ran'; echo 'exit 4'; } >"$T/run5.sh"
    out=$($shell "$T/run5.sh" 2>"$T/err5"); rc=$?
    [ "$rc" = 4 ] && [ "$out" = ran ] || fail "$shell, unwritable dir: rc=$rc out='$out' err: $(cat "$T/err5")"
    [ ! -s "$T/err5" ] || fail "$shell, unwritable dir: noise on stderr: $(cat "$T/err5")"
done
no_leftovers "unwritable dir"

# --- 6. SIGTERM: the probe stops cleanly, rows already written stay ---
touch "$T/rep/__iops_trace_running.t6"
"$PROBE" cpu --dir "$T/rep" --attempt t6 --interval 0.1 &
pp=$!
# until two rows are written (a loaded machine may take longer than a few
# intervals), then the signal: they must stay
i=0
while :; do
    t6=$(ls "$T"/rep/__iops_trace_*_t6.csv 2>/dev/null)
    [ -n "$t6" ] && [ "$(rows "$t6")" -ge 2 ] && break
    i=$((i + 1)); [ "$i" -lt 200 ] || break
    sleep 0.05
done
kill -TERM "$pp"
wait "$pp"; rc=$?
[ "$rc" = 0 ] || fail "SIGTERM: exit status $rc"
t6=$(ls "$T"/rep/__iops_trace_*_t6.csv 2>/dev/null)
[ -n "$t6" ] && [ "$(rows "$t6")" -ge 2 ] || fail "SIGTERM: trace missing or empty"
[ -e "$T/rep/__iops_trace_running.t6" ] || fail "the probe removed its sentinel"

cleanup
echo "probe_wrappers: ok"
