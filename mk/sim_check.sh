#!/bin/sh
# make check-sim: the quick study on the real base inputs (a few seconds):
# every workload profiled, every policy placed and scored, the markdown and
# the CSV contract written. Whether the runtime wins is what the study
# reports; the check does not require it.
set -eu
P="$BUILD/paddiser"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$P" sim study --quick --profile-dir "$T/prof" -o "$T/results.md" --csv "$T/results.csv" >/dev/null
for w in spgemm bfs stencil dmrg; do
    grep -q "^| $w |" "$T/results.md" || { echo "check-sim: no row for $w" >&2; exit 1; }
done
# The oracle rows are there, and the table shows the exact oracle's own
# prediction against its score (0.0% error when the planners' model scored).
awk -F, 'NR > 1 && $5 == "exact-oracle" { n++ } END { if (n == 0) { print "check-sim: no exact-oracle rows" > "/dev/stderr"; exit 1 } }' "$T/results.csv"
grep -q "exact-oracle: its prediction vs the score" "$T/results.md" || { echo "check-sim: no prediction-vs-score column" >&2; exit 1; }
awk -F'|' '/^\| \*\*all\*\* \|/ { print "check-sim: runtime vs baselines (all workloads):" $0 }' "$T/results.md"
