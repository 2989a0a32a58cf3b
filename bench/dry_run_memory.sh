#!/bin/sh
# Memory per planned run of `paddiser bench --dry-run` (issue #13, item 13):
# a study of EXECS executions (a 1000 x EXECS/1000 matrix and one derived
# variable) x 3 repetitions, measured with /usr/bin/time -v. Prints the
# runs, the maximum resident set and the bytes per run.
#
#   bench/dry_run_memory.sh [PADDISER]    env: EXECS (default 100000)
set -eu
PD=$(cd "$(dirname "${1:-build/paddiser}")" && pwd)/$(basename "${1:-build/paddiser}")
EXECS=${EXECS:-100000}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }
T=$(mktemp -d /tmp/pd-dry-run-memory.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/big.yaml" <<EOF
benchmark: {name: big, workdir: $T/wd, repetitions: 3}
vars:
  a: {type: int, sweep: {mode: range, start: 1, end: 1000, step: 1}}
  b: {type: int, sweep: {mode: range, start: 1, end: $((EXECS / 1000)), step: 1}}
  c: {type: int, expr: "a * b"}
command: {template: "echo {{ a }} {{ b }} {{ c }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
    parser: {file: out.txt, metrics: [{name: v}]}
EOF
/usr/bin/time -v "$PD" bench "$T/big.yaml" --dry-run >"$T/out" 2>"$T/time"
runs=$(sed -n 's/.* = \([0-9]*\) runs .*/\1/p' "$T/out")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$T/time")
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$T/time")
echo "runs=$runs max_rss_kb=$rss bytes_per_run=$((rss * 1024 / runs)) wall=$wall"
