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
#      bash+awk               (a sampler written the way IOPS's shell
#                              templates work: date, awk over /proc/stat and
#                              /proc/meminfo with the previous counters in a
#                              state file, one append, a sentinel test and
#                              sleep per sample; our re-creation, not IOPS's
#                              own template. utime+stime+cutime+cstime of the
#                              loop's shell from /proc/PID/stat, in ticks)
#    Each is measured from after its warm-up (2 intervals: start-up and the
#    baseline sample excluded) over K samples: CPU delta / K.
#
#   bench/probe_bench.sh [PROBE]
#   env: REPS (30), K1 (samples at 1 s, 20), K005 (samples at 0.05 s, 200),
#        OLD_PROBE (an older paddiser-probe to compare, in both parts), NO_SAR=1
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
time_reps() {
    local script=$1 i t0 t1
    for ((i = 1; i <= REPS; i++)); do
        t0=$EPOCHREALTIME
        IOPS_ATTEMPT_ID=r$i sh "$script" >/dev/null
        t1=$EPOCHREALTIME
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) * 1000 }'
    done | median
}
# mean CPU ms of one run of SCRIPT and everything it forks (perf task-clock)
cpu_ms() {
    command -v perf >/dev/null 2>&1 || { echo "n/a"; return; }
    IOPS_ATTEMPT_ID=pf perf stat -x, -e task-clock -r "$REPS" -o "$T/perf" sh "$1" >/dev/null 2>&1 || { echo "n/a"; return; }
    awk -F, '$3 ~ /task-clock/ { printf "%.2f", $1 }' "$T/perf"
}
# processes one run of SCRIPT creates (fork/vfork/clone), via strace
count_procs() {
    command -v strace >/dev/null 2>&1 || { echo "n/a"; return; }
    strace -f -qq -e trace=fork,vfork,clone,clone3 -o "$T/strace" env IOPS_ATTEMPT_ID=st sh "$1" >/dev/null 2>&1 || true
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

awk_loop() { # INTERVAL DIR: the IOPS-style sampler
    local iv=$1 d=$2 prev=$2/prev out=$2/awk.csv ts
    : >"$prev"
    echo 'timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb' >"$out"
    while [ -f "$d/running" ]; do
        ts=$(date +%s.%3N)
        awk -v ts="$ts" -v host=bench -v prevf="$prev" '
            BEGIN { while ((getline l < prevf) > 0) { split(l, a, " "); p[a[1]] = l } close(prevf) }
            FILENAME ~ /meminfo$/ { if ($1 == "MemTotal:") mt = $2; if ($1 == "MemAvailable:") ma = $2; next }
            /^cpu[0-9]/ { cur[$1] = $0; order[++n] = $1 }
            END {
                for (k = 1; k <= n; k++) {
                    c = order[k]; split(cur[c], v, " ")
                    if (c in p) {
                        split(p[c], q, " "); d = 0
                        for (j = 2; j <= 8; j++) { dd[j] = v[j] - q[j]; if (dd[j] < 0) dd[j] = 0; d += dd[j] }
                        if (d > 0) printf "%s,%s,%s,%.2f,%.2f,%.2f,%s,%s\n", ts, host, substr(c, 4),
                            100 * (dd[2] + dd[3]) / d, 100 * (dd[4] + dd[7] + dd[8]) / d, 100 * (dd[5] + dd[6]) / d, mt, ma
                    }
                    print cur[c] > prevf
                }
            }' /proc/meminfo /proc/stat >>"$out"
        sleep "$iv"
    done
}

per_sample() { # INTERVAL K
    local iv=$1 k=$2 d=$T/s_$1 ours sar= loop
    mkdir -p "$d"
    touch "$d/__iops_trace_running.b" "$d/running"
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
    awk_loop "$iv" "$d" &
    loop=$!
    bgpids="$bgpids $loop"
    sleep "$(awk -v i="$iv" 'BEGIN { print 2 * i + 0.2 }')" # start-up and baseline
    local o0 s0 l0 o1 s1 l1 x0 x1
    o0=$(schedstat_ns $ours); l0=$(shell_ns $loop); s0=${sar:+$(tree_ns $sar)}; x0=${old:+$(schedstat_ns $old)}
    sleep "$(awk -v i="$iv" -v k="$k" 'BEGIN { print i * k }')"
    o1=$(schedstat_ns $ours); l1=$(shell_ns $loop); s1=${sar:+$(tree_ns $sar)}; x1=${old:+$(schedstat_ns $old)}
    rm -f "$d/running" "$d/__iops_trace_running.b" "$d/old/__iops_trace_running.b"
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
    awk -v l="$l0" -v m="$l1" -v k="$k" -v o="$((o1 - o0))" 'BEGIN {
        printf "    %-26s %8.4f ms CPU per sample  (%.0fx paddiser-probe)\n", "bash+awk (IOPS-style)", (m - l) / k / 1e6, (m - l) / (o > 0 ? o : 1) }'
}
echo "2. CPU time per CPU/memory sample, side by side (same window, $CORES cores):"
per_sample 1 "$K1"
per_sample 0.05 "$K005"
echo "machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
