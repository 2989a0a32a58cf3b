#!/bin/bash
# GPU sampler cost by source, with stand-ins for the vendor software (no GPU
# needed): CPU time (user+sys, the probe and its children) per sample of
# `paddiser-probe gpu` reading the stub NVML library of the tests
# (tests/fixtures/probe/gpu/nvml_stub.c, no process per sample) against the
# same sampler running a stub nvidia-smi (a /bin/sh script printing the
# recorded fixture: a fork+exec of sh and cat per sample, less than a real
# nvidia-smi costs). Both back to back, no sleep between samples. What it
# shows is the spawn cost NVML removes, not NVIDIA's library cost.
#
#   bench/probe_gpu_bench.sh [PROBE]     env: N (samples, default 500), CC
set -euo pipefail
PROBE=$(cd "$(dirname "${1:-build/paddiser-probe}")" && pwd)/$(basename "${1:-build/paddiser-probe}")
N=${N:-500}
CC=${CC:-cc}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /tmp/paddiser_probe_gpu_bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$CC" -O2 -shared -fPIC -o "$T/libnvidia-ml.so.1" "$ROOT/tests/fixtures/probe/gpu/nvml_stub.c"
mkdir -p "$T/bin"
cp "$ROOT/tests/fixtures/probe/bin/nvidia-smi" "$T/bin/"
cp "$ROOT/tests/fixtures/probe/nvidia-smi.out" "$T/"
TIMEFORMAT='%3U %3S'

# one SOURCE: seconds of user+sys for N samples
one() {
    local d=$T/$1 t
    mkdir -p "$d"
    touch "$d/__iops_gpu_trace_running.b"
    t=$( { time PADDISER_GPU_SOURCE=$1 PADDISER_NVML_LIB=$T/libnvidia-ml.so.1 PATH="$T/bin:$PATH" \
        "$PROBE" gpu --dir "$d" --attempt b --host bench --interval 0 --samples "$N" >/dev/null; } 2>&1)
    rows=$(($(wc -l <"$d/__iops_gpu_trace_bench_b.csv") - 1))
    echo "$t" | awk -v s="$1" -v n="$N" -v r="$rows" \
        '{ c = $1 + $2; printf "%-10s %d samples (%d rows): %.3f s CPU, %.1f us/sample\n", s, n, r, c, c / n * 1e6 }'
}
one nvml
one nvidia-smi
