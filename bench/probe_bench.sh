#!/bin/bash
# Sampler overhead: CPU time (user+sys) per 1000 samples of paddiser-probe's
# CPU/memory sampler versus a bash+awk sampler doing the same work the way
# IOPS's shell sampler does (per sample: date for the timestamp, one awk over
# /proc/meminfo and /proc/stat with the previous counters kept in a state
# file, one CSV append, a sentinel test). Both run back to back in one
# invocation, with no sleep between samples, so only sampling cost is
# measured. The same again for the I/O sampler (diskstats + mountstats, the
# disk holding IO_PATH) when that path is on a block device. Prints both and
# the ratios; exits 1 when a ratio is below GOAL.
#
#   bench/probe_bench.sh [PROBE]      env: N (awk samples, default 1000),
#                                          PROBE_N (probe samples, default 10*N), GOAL (default 20),
#                                          IO_PATH (default /)
set -euo pipefail
PROBE=${1:-build/paddiser-probe}
N=${N:-1000}
PROBE_N=${PROBE_N:-$((N * 10))}
GOAL=${GOAL:-20}
IO_PATH=${IO_PATH:-/}
T=$(mktemp -d /tmp/paddiser_probe_bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
SENT=$T/__iops_trace_running.bench
touch "$SENT" "$T/__iops_io_trace_running.bench"
TIMEFORMAT='%3U %3S'

awk_sampler() {
    local prev=$T/prev out=$T/awk.csv i=0 ts
    : >"$prev"
    echo 'timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb' >"$out"
    while [ -f "$SENT" ] && [ "$i" -le "$N" ]; do
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
                        else printf "%s,%s,%s,0.00,0.00,0.00,%s,%s\n", ts, host, substr(c, 4), mt, ma
                    }
                    print cur[c] > prevf
                }
            }' /proc/meminfo /proc/stat >>"$out"
        i=$((i + 1))
    done
}

cpu_seconds() { awk '{ printf "%.3f", $1 + $2 }' <<<"$1"; }

probe_t=$( { time "$PROBE" cpu --dir "$T" --attempt bench --host bench --interval 0 --samples "$PROBE_N" >/dev/null; } 2>&1)
awk_t=$( { time awk_sampler; } 2>&1)

probe_s=$(cpu_seconds "$probe_t")
awk_s=$(cpu_seconds "$awk_t")
cores=$(grep -c '^cpu[0-9]' /proc/stat)
probe_rows=$(($(wc -l <"$T/__iops_trace_bench_bench.csv") - 1))
awk_rows=$(($(wc -l <"$T/awk.csv") - 1))
[ "$probe_rows" -eq $((PROBE_N * cores)) ] || { echo "probe wrote $probe_rows rows, expected $((PROBE_N * cores))"; exit 1; }
[ "$awk_rows" -eq $((N * cores)) ] || { echo "awk sampler wrote $awk_rows rows, expected $((N * cores))"; exit 1; }

report() { # TITLE PROBE_S AWK_S
    awk -v t="$1" -v ps="$2" -v pn="$PROBE_N" -v as="$3" -v an="$N" -v goal="$GOAL" 'BEGIN {
        p = ps * 1000 / pn; a = as * 1000 / an
        if (p <= 0) p = 0.0005 * 1000 / pn   # below the 1 ms resolution of `time`
        printf "%s, CPU time per 1000 samples:\n", t
        printf "  paddiser-probe : %8.3f s  (%d samples in %.3f s)\n", p, pn, ps
        printf "  bash+awk       : %8.3f s  (%d samples in %.3f s)\n", a, an, as
        printf "  ratio          : %8.1fx less CPU (goal: %dx)\n", a / p, goal
        exit (a / p >= goal ? 0 : 1)
    }'
}
status=0
report "CPU/memory sampler, $cores cores" "$probe_s" "$awk_s" || status=1

# ---- I/O sampler ----
disk=$("$PROBE" resolve --io-path "$IO_PATH" --host bench 2>/dev/null |
    sed -n 's/.*"kind": "block", "target": "\([^";]*\)".*/\1/p' | head -1)
if [ -z "$disk" ]; then
    echo "I/O sampler: $IO_PATH is not on a block device here; skipped (set IO_PATH)"
    exit $status
fi

awk_io_sampler() {
    local prev=$T/ioprev out=$T/awkio.csv i=0 ts now last
    : >"$prev"
    echo 'timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,read_ops,write_ops' >"$out"
    last=$(date +%s.%N)
    while [ -f "$T/__iops_io_trace_running.bench" ] && [ "$i" -le "$N" ]; do
        now=$(date +%s.%N)
        awk -v ts="$now" -v last="$last" -v host=bench -v dev="$disk" -v path="$IO_PATH" -v prevf="$prev" '
            BEGIN { while ((getline l < prevf) > 0) { split(l, a, " "); p[a[1]] = l } close(prevf) }
            FILENAME ~ /diskstats$/ { if ($3 == dev) cur[dev] = dev " " $6 * 512 " " $10 * 512 " " $4 " " $8; next }
            /^device / { nfs = ($0 ~ / with fstype nfs/); next }
            nfs && $1 == "bytes:" { nb = $6 " " $7 }
            END {
                for (d in cur) {
                    split(cur[d], v, " ")
                    if (d in p) {
                        split(p[d], q, " ")
                        for (j = 2; j <= 5; j++) { dd[j] = v[j] - q[j]; if (dd[j] < 0) dd[j] = 0 }
                        printf "%.3f,%s,block,%s,%s,%.3f,%d,%d,%d,%d\n", ts, host, d, path, ts - last, dd[2], dd[3], dd[4], dd[5]
                    }
                    print cur[d] > prevf
                }
            }' /proc/diskstats /proc/self/mountstats >>"$out"
        last=$now
        i=$((i + 1))
    done
}

probe_io_t=$( { time "$PROBE" io --dir "$T" --attempt bench --host bench --interval 0 --samples "$PROBE_N" \
    --io-path "$IO_PATH" >/dev/null 2>&1; } 2>&1)
awk_io_t=$( { time awk_io_sampler; } 2>&1)
probe_rows=$(($(wc -l <"$T/__iops_io_trace_bench_bench.csv") - 1))
awk_rows=$(($(wc -l <"$T/awkio.csv") - 1))
[ "$probe_rows" -eq "$PROBE_N" ] || { echo "probe io wrote $probe_rows rows, expected $PROBE_N"; exit 1; }
[ "$awk_rows" -eq "$N" ] || { echo "awk io sampler wrote $awk_rows rows, expected $N"; exit 1; }
report "I/O sampler ($disk)" "$(cpu_seconds "$probe_io_t")" "$(cpu_seconds "$awk_io_t")" || status=1
exit $status
