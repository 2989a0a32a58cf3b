#!/bin/sh
# make check-sim: the quick study on the real base inputs (a few seconds):
# every workload profiled, every policy evaluated, the markdown written, and
# the load-balanced planners never worse than hot-first by more than noise.
set -eu
P="$BUILD/paddiser"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$P" sim study --quick --profile-dir "$T/prof" -o "$T/results.md" --csv "$T/results.csv" >/dev/null
for w in spgemm bfs stencil dmrg; do
    grep -q "### $w on optane" "$T/results.md" || { echo "check-sim: no table for $w" >&2; exit 1; }
done
# exact vs hot-first per (workload, capacity): mean over the study must not be negative
awk -F, 'NR > 1 { t[$2 "," $4 "," $5] = $6 }
  END { n = 0; s = 0
        for (k in t) { split(k, a, ","); if (a[3] == "exact") { h = t[a[1] "," a[2] ",hot-first"]; s += 1 - t[k] / h; n++ } }
        if (n == 0 || s / n < 0) { print "check-sim: exact loses to hot-first on average" > "/dev/stderr"; exit 1 }
        printf "check-sim: exact vs hot-first mean gain %.1f%% over %d points\n", 100 * s / n, n }' "$T/results.csv"
