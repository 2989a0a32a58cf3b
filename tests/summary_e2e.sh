#!/bin/sh
# End to end: a real `paddiser bench` study with every probe on (CPU/memory,
# GPU through a stub nvidia-smi on PATH, I/O on the execution directory's
# disk), then the summary row is recomputed from the traces with awk and
# compared cell by cell (awk's printf rounds like the summary's).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
# under the build directory: /tmp may be a tmpfs, which has no I/O counters
T=$(mktemp -d "$(cd "$BUILD" && pwd)/pd-summary-e2e.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Two GPUs; power ramps per call; GPU 1 reports [N/A] power on the 2nd call
# (row dropped) and [N/A] clocks always (row kept: no metric reads clocks).
# The traces name it "NVIDIA Fake GPU X1" (the vendor is put in front). No
# NVML, so the stub is the GPU source even on a machine with an NVIDIA driver.
export PADDISER_NVML_LIB="$T/no-libnvidia-ml.so.1"
mkdir "$T/bin"
cat >"$T/bin/nvidia-smi" <<EOF2
#!/bin/sh
n=\$(cat "$T/calls" 2>/dev/null || echo 0); n=\$((n + 1)); echo "\$n" >"$T/calls"
p1="\$((20 + n)).50"; [ "\$n" -eq 2 ] && p1="[N/A]"
echo "0, Fake GPU X1, \$((10 * n % 100)), 5, \$((1000 + n)), 16384, \$((40 + n)), \$((100 + 10 * n)).25, 1410, 1215"
echo "1, Fake GPU X1, 0, 0, 3, 16384, 35, \$p1, [N/A], [N/A]"
EOF2
chmod +x "$T/bin/nvidia-smi"
cat >"$T/s.yaml" <<'EOF2'
benchmark:
  name: e2e
  workdir: ./wd
  probes:
    resource_sampling: true
    gpu_sampling: true
    io_sampling: true
    io_paths: ["{{ execution_dir }}"]
    sampling_interval: 0.2
vars:
  mib: {type: int, sweep: {mode: list, values: [4]}}
command:
  template: >-
    { dd if=/dev/zero of=blob bs=1M count={{ mib }} oflag=direct 2>/dev/null ||
    dd if=/dev/zero of=blob bs=1M count={{ mib }} conv=fsync 2>/dev/null; };
    i=0; while [ $i -lt 200 ] && [ "$(cat "$E2E_GPU_CALLS" 2>/dev/null || echo 0)" -lt 4 ]; do
    sleep 0.05; i=$((i + 1)); done; sleep 0.3; rm -f blob; echo v=1
scripts:
  - name: e
    script_template: |
      #!/bin/sh
      {{ command.template }} > m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF2
cd "$T"
# The command waits (up to 10 s) for the stub's fourth call, not a fixed
# time: the GPU sampler runs at nice 19, and the checks below need rows of
# its second call at least.
export E2E_GPU_CALLS="$T/calls"
PATH="$T/bin:$PATH" "$PD" bench s.yaml -q >out.log 2>err.log || { cat err.log; fail "bench failed"; }
R=wd/run_001
REP=$R/exec_0001/repetition_001
S=$R/__iops_resource_summary.csv
[ -f "$S" ] || fail "no summary"
ls "$REP"/__iops_trace_*.csv "$REP"/__iops_gpu_trace_*.csv >/dev/null || fail "a trace is missing: $(ls "$REP")"

# cell NAME: the summary's value of column NAME in row 1
cell() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i } NR == 2 { print (k ? $k : "") }' "$S"; }
check() { got=$(cell "$1"); [ "$got" = "$2" ] || fail "$1: summary $got, recomputed $2"; }
num='^-?[0-9]+([.][0-9]+)?$'

# CPU/memory: mem_used = total - available (kB); cpu = user + system
set -- $(cat "$REP"/__iops_trace_*.csv | awk -F, -v num="$num" '
    $1 == "timestamp" { next }
    $1 !~ num || $4 !~ num || $5 !~ num || $7 !~ num || $8 !~ num { next }
    { m = $7 - $8; c = $4 + $5; n++; ms += m; cs += c
      if (n == 1 || m > mx) mx = m; if (n == 1 || c > cx) cx = c
      if (n == 1 || $1 < t0) t0 = $1; if (n == 1 || $1 > t1) t1 = $1
      k = $2 ":" $3; if (!(k in core) || c > core[k]) core[k] = c; host[$2] = 1 }
    END { hi = -1; lo = -1; for (k in core) { if (hi < 0 || core[k] > hi) hi = core[k]; if (lo < 0 || core[k] < lo) lo = core[k] }
          nh = 0; for (h in host) nh++
          printf "%.3f %.3f %.2f %.2f %.2f %d %d %.2f\n", mx / 1048576, ms / n / 1048576, cs / n, cx, hi - lo, nh, n, (n >= 2 ? t1 - t0 : 0) }')
check mem_peak_gb "$1"; check mem_avg_gb "$2"; check mem_peak_per_node_gb "$1"
check cpu_avg_pct "$3"; check cpu_max_pct "$4"; check cpu_imbalance_pct "$5"
check nodes_traced "$6"; check samples_collected "$7"; check trace_duration_s "$8"

# GPU: rows with a non-numeric used field dropped; per-GPU energy by the
# trapezoid rule over time-sorted power
G=$(cat "$REP"/__iops_gpu_trace_*.csv | awk -F, -v num="$num" '
    $1 == "timestamp" { next }
    $1 ~ num && $3 ~ /^[0-9]+$/ && $5 ~ num && $6 ~ num && $7 ~ num && $9 ~ num && $10 ~ num' | sort -t, -k3,3n -k1,1n)
[ -n "$G" ] || fail "no usable GPU rows"
set -- $(printf '%s\n' "$G" | awk -F, '
    { g = $3; n[g]++; u[g] += $5; mu[g] += $6; t[g] += $9; p[g] += $10
      if (!(g in mp) || $7 > mp[g]) mp[g] = $7
      if (g in lt) e[g] += (lp[g] + $10) / 2 * ($1 - lt[g]); lt[g] = $1; lp[g] = $10; rows++ }
    END { bp = -1; et = 0; for (g in n) { c++; if (p[g] / n[g] > bp) bp = p[g] / n[g]; et += e[g] }
          printf "%d %d %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n", c, rows, bp, et,
                 p[0] / n[0], e[0], p[1] / n[1], e[1], mp[0], t[0] / n[0] }')
check gpu_count "$1"; check gpu_samples_collected "$2"; check gpu_avg_power_w "$3"
check gpu_energy_j "$4"; check gpu0_avg_power_w "$5"; check gpu0_energy_j "$6"
check gpu1_avg_power_w "$7"; check gpu1_energy_j "$8"; check gpu0_mem_peak_mib "$9"
check gpu0_avg_temperature_c "${10}"
[ "$1" = 2 ] || fail "expected 2 GPUs, got $1"
[ "$(cat "$REP"/__iops_gpu_trace_*.csv | grep -c ',1,NVIDIA Fake GPU X1,.*,\[N/A\],\[N/A\],\[N/A\]$')" -ge 1 ] ||
    fail "the [N/A] power row was not traced"

# A sampler that ran but wrote nothing: I/O on tmpfs only (no counters, so
# no trace) reports io_nodes_traced = io_samples_collected = 0 (spec: "no
# usable samples reports only the counter columns"); CPU still samples.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
    sed -e 's|\./wd|./wd2|' -e 's|\["{{ execution_dir }}"\]|["/dev/shm"]|' -e 's|gpu_sampling: true|gpu_sampling: false|' \
        s.yaml >s2.yaml
    "$PD" bench s2.yaml -q >out2.log 2>err2.log || { cat err2.log; fail "tmpfs bench failed"; }
    S2=wd2/run_001/__iops_resource_summary.csv
    ! ls wd2/run_001/exec_0001/repetition_001/__iops_io_trace_* >/dev/null 2>&1 || fail "tmpfs I/O trace"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
             NR == 2 { if ($c["io_nodes_traced"] != "0" || $c["io_samples_collected"] != "0" || ("io_write_gb" in c) ||
                           $c["samples_collected"] + 0 < 1) exit 1 }' "$S2" ||
        fail "tmpfs I/O row: $(cat "$S2")"
fi

# I/O. A disk without counters (tmpfs, overlay) leaves no trace: the
# sampler ran, so the row has its counters at 0 and nothing else.
if ! ls "$REP"/__iops_io_trace_*.csv >/dev/null 2>&1; then
    grep -q '"kind": "none"' "$REP"/__iops_io_targets_*.json || fail "no I/O trace: $(ls "$REP")"
    check io_nodes_traced 0; check io_samples_collected 0; check io_write_gb ""
    echo "summary_e2e: OK (no I/O counters for $T)"
    exit 0
fi
# node-instant = (host, timestamp), devices summed, interval once
set -- $(cat "$REP"/__iops_io_trace_*.csv | awk -F, -v num="$num" '
    $1 == "timestamp" { next }
    $1 !~ num || $6 !~ num || $7 !~ num || $8 !~ num || $9 !~ num || $10 !~ num || $6 <= 0 { next }
    { k = $2 SUBSEP $1; if (!(k in iv)) { iv[k] = $6; hk[k] = $2; ord[++ni] = k } else if ($6 > iv[k]) iv[k] = $6
      rb[k] += $7; wb[k] += $8; R += $7; W += $8; WO += $10; if ($3 == "block") DW += $8 }
    END { for (i = 1; i <= ni; i++) { k = ord[i]  # first-seen order: sums as the summary adds them
                                      dur[hk[k]] += iv[k]; p = wb[k] / iv[k] / 1048576; if (p > pk) pk = p
                                      if (wb[k] > 0) act += iv[k] }
          for (h in dur) if (dur[h] > d) d = dur[h]
          printf "%.3f %.3f %.2f %.2f %.2f %d %.2f %.2f %.2f %.3f\n", W / 1073741824, DW / 1073741824, d,
                 W / 1048576 / d, pk, ni, act, (act > 0 ? W / 1048576 / act : 0), WO / d, R / 1073741824 }')
check io_write_gb "$1"; check io_disk_write_gb "$2"; check io_trace_duration_s "$3"
check io_write_mbs_avg "$4"; check io_write_mbs_peak_per_node "$5"; check io_samples_collected "$6"
check io_write_active_s "$7"; check io_write_mbs_active "$8"; check io_write_iops_avg "$9"
check io_read_gb "${10}"; check io_nfs_write_gb 0.000; check io_nodes_traced 1
echo "summary_e2e: OK"
