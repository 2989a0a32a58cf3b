#!/bin/sh
# Allocation-hook cost of `paddiser run` (make bench-run-alloc): builds
# bench/run_alloc_bench.c, runs it REPS times as is and REPS times under
# `paddiser run --backend none` (interleaved), and prints the median ns per
# malloc+free pair of each size and the difference. Timings: run on an idle
# machine. PADDISER_RUN_KEEP_FREED=0 in the environment: no kept blocks.
set -eu
BUILD=${BUILD:-build}
CC=${CC:-cc}
REPS=${REPS:-7}
PD="$BUILD/paddiser"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$CC -O2 -o "$tmp/bench" "$(dirname "$0")/run_alloc_bench.c"
i=0
while [ "$i" -lt "$REPS" ]; do
    "$tmp/bench" >>"$tmp/plain"
    "$PD" run --backend none -- "$tmp/bench" >>"$tmp/run"
    i=$((i + 1))
done
median() { # median KEY FILE
    awk -v k="$1" '$1 == k { print $2 }' "$2" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-9s %12s %12s %12s\n' pair plain_ns run_ns diff_ns
for k in small mid large whole; do
    a=$(median "${k}_ns" "$tmp/plain"); b=$(median "${k}_ns" "$tmp/run")
    printf '%-9s %12s %12s %12s\n' "$k" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }')"
done
