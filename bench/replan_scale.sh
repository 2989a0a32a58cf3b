#!/bin/sh
# What the runtime's own calls cost as the footprint grows: the phases
# example (examples/runtime/phases.c) at MIB MiB (its largest input; the
# inputs 0.5, 1, 0.75 and 0.5 of it, 3 instances each, one pass, one
# stencil sweep), the sim backend with a quarter of MIB as fast memory.
# Per run it prints its four longest sync points (those that replan: after
# the sampled first instance, after a new input, after a later sampled
# instance), the sum of all its sync points, the registrations of the
# inputs after the first and their sum, and the run's minor page faults. A
# timing, not a test.
#
#   sh bench/replan_scale.sh [RUNS [MIB]]     (default 3 runs, 2048 MiB)
#   env: BUILD (default the repository's build)
set -eu
RUNS=${1:-3}
MIB=${2:-2048}
here=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$here/build}
ex=$BUILD/examples/runtime/phases
[ -x "$ex" ] || { echo "replan_scale.sh: $ex not built (make $ex)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$RUNS" ]; do
    i=$((i + 1))
    PADDISER_BACKEND=sim PADDISER_FAST_CAPACITY=$((MIB * 1048576 / 4)) PADDISER_QUIET=1 \
        /usr/bin/time -f "%R" -o "$tmp/faults" \
        "$ex" --mib "$MIB" --scales 0.5,1,0.75,0.5 --reps 3 --passes 1 --sweeps 1 > "$tmp/out"
    awk -v faults="$(cat "$tmp/faults")" -v run="$i" '
        /^instance=/ {
            for (f = 1; f <= NF; f++) {
                split($f, kv, "=")
                if (kv[1] == "sync_s") { s = kv[2] * 1000; ssum += s; sync[++ns] = s }
                if (kv[1] == "reg_s") { r = kv[2] * 1000; rsum += r; if (r > 0) rl = rl sprintf(" %.1f", r) }
            }
        }
        END {
            for (k = 1; k <= 4 && k <= ns; k++) { # the four longest, longest first
                m = 0
                for (i = 1; i <= ns; i++) if (!(i in used) && (m == 0 || sync[i] > sync[m])) m = i
                used[m] = 1
                sl = sl sprintf(" %.2f", sync[m])
            }
            printf "run %d: longest sync points (ms):%s | all sync points %.1f ms | registrations (ms):%s | %.1f ms | %s minor faults\n", run, sl, ssum, rl, rsum, faults
        }
    ' "$tmp/out"
done
