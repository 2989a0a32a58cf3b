#!/bin/sh
# paddiser bench with resource sampling on: the probe block sits after the
# shebang and #SBATCH header of run_<script>.sh, the CPU/memory trace lands in
# the repetition directory and the run summary is written from it.
# Skips (passes) while the probe module is the placeholder.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-probe.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat >"$T/p.yaml" <<'EOF2'
benchmark:
  name: probed
  workdir: ./wd
  probes: {resource_sampling: true, sampling_interval: 0.1}
vars:
  n: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "sleep 0.6; echo v={{ n }}"}
scripts:
  - name: p
    script_template: |
      #!/bin/bash
      #SBATCH --ntasks=1
      #SBATCH --time=1
      MARK=body
      {{ command.template }} > m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF2
cd "$T"
rc=0; "$PD" bench p.yaml -q >out.log 2>err.log || rc=$?
if [ "$rc" -eq 2 ] && grep -q "not built yet" err.log; then
    echo "bench_probe: SKIP (probe module not built yet)"; exit 0
fi
[ "$rc" -eq 0 ] || { cat err.log; fail "probed run exit $rc"; }
S=wd/run_001/exec_0001/repetition_001/run_p.sh
sed -n 1p "$S" | grep -q '^#!/bin/bash' || fail "shebang not first"
sed -n 3p "$S" | grep -q '^#SBATCH --time=1' || fail "#SBATCH header moved: $(sed -n 1,4p "$S")"
body=$(grep -n '^MARK=body' "$S" | cut -d: -f1)
probe=$(grep -n 'paddiser-probe' "$S" | head -1 | cut -d: -f1)
[ -n "$probe" ] && [ "$probe" -gt 3 ] && [ "$probe" -lt "$body" ] || fail "probe block not between header and body"
ls wd/run_001/exec_0001/repetition_001/__iops_trace_*_*.csv >/dev/null 2>&1 || fail "no CPU trace in the repetition dir"
[ -f wd/run_001/__iops_resource_summary.csv ] || { cat err.log; fail "no run summary"; }
head -1 wd/run_001/__iops_resource_summary.csv | grep -q '^execution_id,repetition,n,.*cpu_avg_pct' || fail "summary columns"
grep -q "$(dirname "$PD")/paddiser-probe" "$S" || fail "default probe binary is not the one next to paddiser"
# PADDISER_PROBE overrides the sampler binary; a missing one never fails the benchmark
rc=0; PADDISER_PROBE=/nonexistent/pd-probe "$PD" bench p.yaml -q >/dev/null 2>err2.log || rc=$?
[ "$rc" -eq 0 ] || { cat err2.log; fail "run with a missing probe binary failed ($rc)"; }
grep -q /nonexistent/pd-probe wd/run_002/exec_0001/repetition_001/run_p.sh || fail "PADDISER_PROBE ignored"
echo "bench_probe: ok"
