#!/bin/sh
# paddiser-probe gpu with each GPU source: a stub libnvidia-ml.so.1 built here
# (PADDISER_NVML_LIB), then stub nvidia-smi / amd-smi / rocm-smi / xpu-smi
# scripts first on PATH printing recorded output (tests/fixtures/probe/gpu,
# sources in its README). Checks the trace header, the rows, the command line
# each tool got, and the detection order. No timings.
set -u
BUILD=${BUILD:-build}
TESTS_DIR=$(cd "${TESTS_DIR:-tests}" && pwd)
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
FX=$TESTS_DIR/fixtures/probe/gpu
CC=${CC:-cc}
T=$(mktemp -d /tmp/paddiser_probe_gpu.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL probe_gpu_vendors: $*" >&2
    exit 1
}
HEADER=timestamp,hostname,gpu_index,gpu_name,utilization_gpu_pct,utilization_mem_pct,memory_used_mib,memory_total_mib,temperature_c,power_draw_w,clock_sm_mhz,clock_mem_mhz

# Only cat and sh on the stubs' PATH, so no real vendor tool can be found.
mkdir -p "$T/sys" "$T/none"
ln -s "$(command -v cat)" "$T/sys/cat"
ln -s "$(command -v sh)" "$T/sys/sh"

# stub NAME: a script printing $STUB_DIR/NAME.<first argument> (or NAME.out),
# appending its arguments to $T/args.NAME.
stub() {
    mkdir -p "$T/$2"
    cat >"$T/$2/$1" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$T/args.$1"
f="$T/out/$1.\$1"
[ -f "\$f" ] || f="$T/out/$1.out"
[ -f "\$f" ] || exit 1
cat "\$f"
EOF
    chmod +x "$T/$2/$1"
}
mkdir -p "$T/out"
cp "$TESTS_DIR/fixtures/probe/nvidia-smi.out" "$T/out/nvidia-smi.out"
cp "$FX/amd-smi-metric-mem.csv" "$T/out/amd-smi.metric"
cp "$FX/rocm-smi.csv" "$T/out/rocm-smi.out"
cp "$FX/xpu-smi-dump-max1550.csv" "$T/out/xpu-smi.dump"
cp "$FX/xpu-smi-discovery.csv" "$T/out/xpu-smi.discovery"

# run DIRS...: samples twice into a fresh repetition dir with the stub dirs
# first on PATH and $EXTRA (VAR=value words) in the environment; the trace
# path in $f.
ENV=$(command -v env)
EXTRA=
n=0
run() {
    n=$((n + 1))
    rep=$T/rep$n
    mkdir -p "$rep"
    : >"$rep/__iops_gpu_trace_running.a$n"
    p=$T/sys
    for d in "$@"; do p=$T/$d:$p; done
    # shellcheck disable=SC2086 # EXTRA is split into VAR=value words
    "$ENV" PATH="$p" $EXTRA "$PROBE" gpu --dir "$rep" --attempt "a$n" --host node01 --interval 0 --samples 2 ||
        fail "paddiser-probe gpu exited $? (run $n)"
    f=$rep/__iops_gpu_trace_node01_a$n.csv
}
# rows FILE: the rows without the header and the timestamp column.
rows() { sed 1d "$1" | cut -d, -f2-; }
check_header() { [ "$(head -1 "$1")" = "$HEADER" ] || fail "header of $1: $(head -1 "$1")"; }

# --- NVML: the stub library, no tool on PATH ---
"$CC" -shared -fPIC -o "$T/libnvidia-ml.so.1" "$FX/nvml_stub.c" || fail "cannot build the NVML stub"
export PADDISER_NVML_LIB="$T/libnvidia-ml.so.1"
run none
check_header "$f"
want='node01,0,NVIDIA A100-SXM4-80GB,85,40,30000,81920,62,250.50,1410,1215
node01,1,NVIDIA GeForce RTX 3090,[N/A],[N/A],100,24576,40,[N/A],210,405'
[ "$(rows "$f")" = "$want
$want" ] || fail "NVML rows: $(rows "$f")"
nvml_rows=$(rows "$f" | head -2)

# NVML is preferred over nvidia-smi on PATH (which is then never run).
stub nvidia-smi nv
run nv
[ "$(rows "$f" | head -2)" = "$nvml_rows" ] || fail "NVML not preferred: $(rows "$f")"
[ ! -e "$T/args.nvidia-smi" ] || fail "nvidia-smi ran although NVML works"

# --- nvidia-smi: NVML failing to initialise, then absent ---
EXTRA=STUB_NVML_FAIL_INIT=1
run nv
EXTRA=
check_header "$f"
[ "$(rows "$f" | wc -l)" -eq 6 ] || fail "nvidia-smi rows: $(rows "$f")"
# The same GPUs give the same fields through NVML and through nvidia-smi.
[ "$(rows "$f" | head -2)" = "$nvml_rows" ] || fail "nvidia-smi vs NVML: $(rows "$f" | head -2)"
grep -q -- "--query-gpu=index,name,utilization.gpu" "$T/args.nvidia-smi" || fail "nvidia-smi args"
export PADDISER_NVML_LIB="$T/no-such-libnvidia-ml.so.1"
run nv
[ "$(rows "$f" | head -2)" = "$nvml_rows" ] || fail "nvidia-smi without NVML: $(rows "$f")"

# --- amd-smi: names asked once (static fails here: "AMD GPU"), metric per sample ---
stub amd-smi amd
run amd
check_header "$f"
[ "$(rows "$f")" = "node01,0,AMD GPU,,,905,16368,,,,
node01,0,AMD GPU,,,905,16368,,,," ] || fail "amd-smi rows: $(rows "$f")"
[ "$(cat "$T/args.amd-smi")" = "static --asic --csv
metric --usage --power --clock --temperature --mem-usage --csv
metric --usage --power --clock --temperature --mem-usage --csv" ] || fail "amd-smi args: $(cat "$T/args.amd-smi")"

# --- rocm-smi ---
stub rocm-smi rocm
run rocm
check_header "$f"
[ "$(rows "$f" | head -1)" = "node01,0,AMD Radeon RX 7900 XT,0,,26,20464,,,," ] || fail "rocm-smi rows: $(rows "$f")"
[ "$(head -1 "$T/args.rocm-smi")" = "--showproductname --showuse --showmemuse --showmeminfo vram --showtemp --showpower --showclocks --csv" ] ||
    fail "rocm-smi args: $(head -1 "$T/args.rocm-smi")"

# --- xpu-smi: discovery once for the names, dump per sample ---
stub xpu-smi xpu
run xpu
check_header "$f"
[ "$(rows "$f" | wc -l)" -eq 12 ] || fail "xpu-smi rows: $(rows "$f")"
[ "$(rows "$f" | head -1)" = "node01,0,Intel(R) Graphics [0x56c0],,,,,35.50,293.78,1600.00," ] ||
    fail "xpu-smi rows: $(rows "$f")"
[ "$(rows "$f" | sed -n 3p)" = "node01,2,Intel GPU,,,,,37.00,281.70,1600.00," ] || fail "xpu-smi row 3: $(rows "$f")"
[ "$(head -2 "$T/args.xpu-smi")" = "discovery --dump 1,2,16
dump -d -1 -m 0,1,2,3,17,18 -n 1" ] || fail "xpu-smi args: $(cat "$T/args.xpu-smi")"

# --- detection order: amd-smi before rocm-smi before xpu-smi ---
mkdir -p "$T/all"
cp "$T/amd/amd-smi" "$T/rocm/rocm-smi" "$T/xpu/xpu-smi" "$T/all/"
run all
rows "$f" | grep -q "AMD GPU" || fail "order: amd-smi not first: $(rows "$f")"
rm "$T/all/amd-smi"
run all
rows "$f" | grep -q "Radeon RX 7900 XT" || fail "order: rocm-smi not second: $(rows "$f")"
# PADDISER_GPU_SOURCE picks one.
EXTRA=PADDISER_GPU_SOURCE=xpu-smi
run all
EXTRA=
rows "$f" | grep -q "Intel" || fail "PADDISER_GPU_SOURCE=xpu-smi: $(rows "$f")"

# --- nothing to sample: no tool, no library; a tool that fails ---
run none
[ ! -e "$f" ] || fail "trace written without a GPU source"
rm "$T/out/rocm-smi.out"
run rocm
[ ! -e "$f" ] || fail "trace written although rocm-smi fails"

echo "ok probe_gpu_vendors"
