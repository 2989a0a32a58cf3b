#!/bin/bash
# Cost of the probes (issue #18), in one run:
#
# 1. Per repetition: the wall time a run script pays for the injected block
#    (CPU/memory sampler, interval 1 s): start, stop, the closing sample and
#    the file close included. REPS runs of `block; sleep 0.1` against REPS runs
#    of `sleep 0.1` (0.1 s: long enough for the closing sample), each timed
#    with $EPOCHREALTIME (no process of its own): the medians and their
#    difference. With perf on PATH, also the CPU time of a repetition, the
#    samplers included (task-clock, inherited by every process the script
#    forks: less sensitive to a loaded machine than the wall time); with
#    strace, the processes one repetition creates. OLD_PROBE=path compares an
#    older paddiser-probe's block the same way.
#
# 2. Per sample: the CPU time (user+sys) of one CPU/memory sample, side by
#    side, all running at once over the same window, at 1 s and 0.05 s:
#      paddiser-probe cpu     (/proc/PID/schedstat: ns)
#      sar -u ALL -P ALL -r   (sar plus its sadc, schedstat; the same data:
#                              per-core CPU and memory; sar's interval is
#                              whole seconds, so not at 0.05 s)
#      IOPS 3.5.8's own       (RESOURCE_SAMPLER_TEMPLATE of iops/execution/
#                              planner.py, formatted as IOPS does by
#                              bench/iops_sampler.py and run as IOPS runs it on
#                              one node: a bash loop of date, awk, grep and
#                              arithmetic per core per sample, a sentinel file
#                              and sleep; utime+stime+cutime+cstime of the
#                              loop's shell from /proc/PID/stat, in ticks)
#    Each is measured from after its warm-up (2 intervals: start-up and the
#    baseline sample excluded) over K samples: CPU delta / K.
#
# IOPS's sampler is also in part 1: a job script that sources IOPS's exit
# handler and sampler, as IOPS's planner writes it, against the same script
# without them (both bash).
#
#   bench/probe_bench.sh [PROBE]
#   env: REPS (30), K1 (samples at 1 s, 20), K005 (samples at 0.05 s, 200),
#        OLD_PROBE (an older paddiser-probe to compare, in both parts), NO_SAR=1,
#        IOPS_SRC (an IOPS checkout) or IOPS_GIT_DIR (a clone's git directory,
#        bare or not; its HEAD): where IOPS's sampler is read from. Without
#        either, IOPS's rows are skipped with a hint; the numbers in
#        docs/probe.md name the IOPS commit they ran.
# sar comes from Debian's sysstat (make bench-probe installs it through
# scripts/install-deps.sh); it runs here as a plain command writing to a
# temporary directory: no service, no system state touched.
set -euo pipefail
PROBE=${1:-build/paddiser-probe}
PROBE=$(cd "$(dirname "$PROBE")" && pwd)/$(basename "$PROBE")
REPS=${REPS:-30}
K1=${K1:-20}
K005=${K005:-200}
T=$(mktemp -d /tmp/paddiser_probe_bench.XXXXXX)
bgpids=
trap 'for p in $bgpids; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT
TCK=$(getconf CLK_TCK)
CORES=$(grep -c '^cpu[0-9]' /proc/stat)
echo "machine: $CORES cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# ---- 1. per repetition ----
# REPS timed runs of SCRIPT; prints the median wall time in ms.
# RUN: the shell the scripts run under (sh; IOPS's job scripts are bash)
RUN=sh
time_reps() {
    local script=$1 i t0 t1
    for ((i = 1; i <= REPS; i++)); do
        t0=$EPOCHREALTIME
        IOPS_ATTEMPT_ID=r$i $RUN "$script" >/dev/null
        t1=$EPOCHREALTIME
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
    done | median
}
# mean CPU ms of one run of SCRIPT and everything it forks (perf task-clock)
cpu_ms() {
    command -v perf >/dev/null 2>&1 || { echo "n/a"; return; }
    IOPS_ATTEMPT_ID=pf perf stat -x, -e task-clock -r "$REPS" -o "$T/perf" $RUN "$1" >/dev/null 2>&1 || { echo "n/a"; return; }
    awk -F, '$3 ~ /task-clock/ { printf "%.2f", $1 }' "$T/perf"
}
# processes one run of SCRIPT creates (fork/vfork/clone), via strace
count_procs() {
    command -v strace >/dev/null 2>&1 || { echo "n/a"; return; }
    strace -f -qq -e trace=fork,vfork,clone,clone3 -o "$T/strace" env IOPS_ATTEMPT_ID=st $RUN "$1" >/dev/null 2>&1 || true
    grep -cE '(fork|clone3?)\(' "$T/strace" || true
}
rep_cost() { # LABEL PROBE_BINARY
    local d=$T/rep_$1
    mkdir -p "$d"
    "$2" block --dir "$d" --cpu --interval 1 --probe "$2" >"$T/block_$1"
    { echo '#!/bin/sh'; cat "$T/block_$1"; echo 'sleep 0.1'; } >"$T/with_$1.sh"
    local with procs cpu
    with=$(time_reps "$T/with_$1.sh")
    procs=$(count_procs "$T/with_$1.sh")
    cpu=$(cpu_ms "$T/with_$1.sh")
    awk -v l="$1" -v w="$with" -v b="$base" -v p="$procs" -v c="$cpu" -v bc="$base_cpu" 'BEGIN {
        printf "  %-18s wall %8.2f ms (+%.2f over the bare script), CPU %s ms (+%s), %s processes\n", l, w, w - b, c,
            c == "n/a" || bc == "n/a" ? "n/a" : sprintf("%.2f", c - bc), p }'
}
{ echo '#!/bin/sh'; echo 'sleep 0.1'; } >"$T/bare.sh"
base=$(time_reps "$T/bare.sh")
base_cpu=$(cpu_ms "$T/bare.sh")
echo "1. Per-repetition cost of the probes (CPU/memory sampler at 1 s; wall: median of $REPS runs, CPU: mean):"
awk -v b="$base" -v p="$(count_procs "$T/bare.sh")" -v c="$base_cpu" 'BEGIN {
    printf "  %-18s wall %8.2f ms, CPU %s ms, %s processes\n", "no probes", b, c, p }'
rep_cost "paddiser-probe" "$PROBE"
if [ -n "${OLD_PROBE:-}" ]; then
    rep_cost "older (OLD_PROBE)" "$(cd "$(dirname "$OLD_PROBE")" && pwd)/$(basename "$OLD_PROBE")"
fi

# IOPS's planner.py, from IOPS_SRC or IOPS_GIT_DIR; its commit into $T/iops_commit
HERE=$(cd "$(dirname "$0")" && pwd)
have_iops=
if [ -n "${IOPS_SRC:-}" ] && [ -f "$IOPS_SRC/iops/execution/planner.py" ]; then
    cp "$IOPS_SRC/iops/execution/planner.py" "$T/planner.py" &&
        { git -C "$IOPS_SRC" rev-parse --short HEAD 2>/dev/null || echo "unknown commit"; } >"$T/iops_commit" && have_iops=1
elif [ -n "${IOPS_GIT_DIR:-}" ]; then
    git --git-dir="$IOPS_GIT_DIR" show HEAD:iops/execution/planner.py >"$T/planner.py" 2>/dev/null &&
        git --git-dir="$IOPS_GIT_DIR" rev-parse --short HEAD >"$T/iops_commit" && have_iops=1
fi
# IOPS's scripts for a repetition in DIR at INTERVAL: DIR/handler.sh, DIR/sampler.sh
iops_scripts() {
    mkdir -p "$1"
    python3 "$HERE/iops_sampler.py" "$T/planner.py" handler "$1" "$2" >"$1/handler.sh" &&
        python3 "$HERE/iops_sampler.py" "$T/planner.py" sampler "$1" "$2" >"$1/sampler.sh"
}
if [ -n "$have_iops" ] && iops_scripts "$T/rep_iops" 1; then
    # as IOPS's planner writes a job script: the exit handler, then the
    # sampler, sourced before the command; against the same bash script
    { echo '#!/bin/bash'; echo 'sleep 0.1'; } >"$T/bare_bash.sh"
    { echo '#!/bin/bash'; echo "source $T/rep_iops/handler.sh"; echo "source $T/rep_iops/sampler.sh"
      echo 'sleep 0.1'; } >"$T/with_iops.sh"
    RUN=bash
    bb=$(time_reps "$T/bare_bash.sh"); bbc=$(cpu_ms "$T/bare_bash.sh"); bbp=$(count_procs "$T/bare_bash.sh")
    iw=$(time_reps "$T/with_iops.sh"); ic=$(cpu_ms "$T/with_iops.sh"); ip=$(count_procs "$T/with_iops.sh")
    RUN=sh
    awk -v b="$bb" -v c="$bbc" -v p="$bbp" 'BEGIN {
        printf "  %-18s wall %8.2f ms, CPU %s ms, %s processes\n", "no probes (bash)", b, c, p }'
    awk -v w="$iw" -v b="$bb" -v p="$ip" -v c="$ic" -v bc="$bbc" -v id="$(cat "$T/iops_commit")" 'BEGIN {
        printf "  %-18s wall %8.2f ms (+%.2f over the bare bash script), CPU %s ms (+%s), %s processes (IOPS %s)\n",
            "IOPS sampler", w, w - b, c, c == "n/a" || bc == "n/a" ? "n/a" : sprintf("%.2f", c - bc), p, id }'
    echo "    (IOPS's sampler takes no closing sample: its exit handler removes the sentinel and the loop"
    echo "     ends after its current sleep, outside the repetition; CPU counts what ran before the script ended)"
else
    echo "  IOPS sampler       not measured: set IOPS_SRC to an IOPS checkout or IOPS_GIT_DIR to a clone's git"
    echo "                     directory (git clone https://github.com/luanteylo/iops)"
fi

# ---- 2. per sample ----
schedstat_ns() { awk '{ print $1 }' "/proc/$1/schedstat" 2>/dev/null || echo 0; }
# CPU ns of PID and its live children (sar: sadc), from schedstat
tree_ns() {
    local p=$1 total c
    total=$(schedstat_ns "$p")
    for c in $(grep -l "^[0-9]* ([^)]*) . $p " /proc/[0-9]*/stat 2>/dev/null | cut -d/ -f3); do
        total=$((total + $(schedstat_ns "$c")))
    done
    echo "$total"
}
# the shell loop with its reaped children (ticks -> ns)
shell_ns() { awk -v tck="$TCK" '{ sub(/^.*\) /, ""); print ($12 + $13 + $14 + $15) * 1e9 / tck }' "/proc/$1/stat"; }

per_sample() { # INTERVAL K
    local iv=$1 k=$2 d=$T/s_$1 ours sar= loop
    mkdir -p "$d"
    touch "$d/__iops_trace_running.b"
    "$PROBE" cpu --dir "$d" --attempt b --host bench --interval "$iv" &
    ours=$!
    bgpids="$bgpids $ours"
    local old=
    if [ -n "${OLD_PROBE:-}" ]; then
        mkdir -p "$d/old"
        touch "$d/old/__iops_trace_running.b"
        "$OLD_PROBE" cpu --dir "$d/old" --attempt b --host bench --interval "$iv" &
        old=$!
        bgpids="$bgpids $old"
    fi
    if [ "$iv" = 1 ] && [ -z "${NO_SAR:-}" ] && command -v sar >/dev/null 2>&1; then
        LC_ALL=C sar -u ALL -P ALL -r 1 $((k + 10)) >"$d/sar.txt" 2>&1 &
        sar=$!
        bgpids="$bgpids $sar"
    fi
    loop=
    if [ -n "$have_iops" ] && iops_scripts "$d/iops" "$iv"; then
        # run standalone, as srun runs it on each node: the sampling loop
        # alone, while its sentinel exists (the attempt id from SLURM_JOB_ID)
        touch "$d/iops/__iops_trace_running.bench"
        SLURM_JOB_ID=bench bash "$d/iops/sampler.sh" </dev/null >/dev/null 2>&1 &
        loop=$!
        bgpids="$bgpids $loop"
    fi
    sleep "$(awk -v i="$iv" 'BEGIN { print 2 * i + 0.2 }')" # start-up and baseline
    local o0 s0 l0 o1 s1 l1 x0 x1
    # IOPS's loop may fall behind its interval: its samples are counted from
    # its trace (one row per core and sample), not assumed to be K
    iops_rows() { cat "$d"/iops/__iops_trace_*.csv 2>/dev/null | wc -l; }
    local r0 r1
    r0=$(iops_rows)
    o0=$(schedstat_ns $ours); l0=${loop:+$(shell_ns $loop)}; s0=${sar:+$(tree_ns $sar)}; x0=${old:+$(schedstat_ns $old)}
    sleep "$(awk -v i="$iv" -v k="$k" 'BEGIN { print i * k }')"
    r1=$(iops_rows)
    o1=$(schedstat_ns $ours); l1=${loop:+$(shell_ns $loop)}; s1=${sar:+$(tree_ns $sar)}; x1=${old:+$(schedstat_ns $old)}
    rm -f "$d/__iops_trace_running.b" "$d/old/__iops_trace_running.b" "$d/iops/__iops_trace_running.bench"
    [ -z "$sar" ] || kill "$sar" 2>/dev/null || true
    wait $ours $loop $old 2>/dev/null || true
    [ -z "$sar" ] || wait "$sar" 2>/dev/null || true
    local rows
    rows=$(($(wc -l <"$d/__iops_trace_bench_b.csv") - 1))
    echo "  interval $iv s, K = $k samples ($rows rows from paddiser-probe over the whole run):"
    awk -v o="$((o1 - o0))" -v k="$k" 'BEGIN { printf "    %-26s %8.4f ms CPU per sample\n", "paddiser-probe cpu", o / k / 1e6 }'
    if [ -n "$sar" ]; then
        awk -v s="$((s1 - s0))" -v k="$k" -v o="$((o1 - o0))" 'BEGIN {
            printf "    %-26s %8.4f ms CPU per sample  (paddiser-probe / sar = %.2f)\n", "sar -u ALL -P ALL -r", s / k / 1e6, o / s }'
    elif [ "$iv" = 1 ]; then
        echo "    sar                        not measured (not installed, or NO_SAR)"
    else
        echo "    sar                        n/a (its interval is whole seconds)"
    fi
    [ -z "$old" ] || awk -v x="$((x1 - x0))" -v k="$k" 'BEGIN {
        printf "    %-26s %8.4f ms CPU per sample\n", "older (OLD_PROBE) cpu", x / k / 1e6 }'
    if [ -n "$loop" ]; then
        awk -v l="$l0" -v m="$l1" -v k="$k" -v n="$(((r1 - r0) / CORES))" -v o="$((o1 - o0))" \
            -v id="$(cat "$T/iops_commit")" 'BEGIN {
            if (n < 1) { printf "    %-26s no sample in the window\n", "IOPS sampler"; exit }
            printf "    %-26s %8.4f ms CPU per sample  (%.0fx paddiser-probe per sample; %d samples in the window of %d; IOPS %s)\n",
                "IOPS sampler", (m - l) / n / 1e6, ((m - l) / n) / (o > 0 ? o / k : 1), n, k, id }'
    else
        echo "    IOPS sampler               not measured (IOPS_SRC / IOPS_GIT_DIR unset)"
    fi
}
echo "2. CPU time per CPU/memory sample, side by side (same window, $CORES cores):"
per_sample 1 "$K1"
per_sample 0.05 "$K005"
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
