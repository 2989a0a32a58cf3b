#!/bin/sh
# A full disk (issue #13), simulated with a file-size limit (ulimit -f,
# RLIMIT_FSIZE) that results.csv outgrows: the harness's write fails, it
# says which file, and the run exits 1 ("results were not all saved"),
# never 0. The old harness was killed by SIGXFSZ halfway (exit 153), with
# no word on what was lost.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-full.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# 12 executions whose 1000-character variable makes results.csv ~12 KB;
# every other file the harness writes stays under 4 KB
pad=$(printf '%1000s' '' | tr ' ' p)
cat >full.yaml <<EOF
benchmark: {name: full, workdir: ./wd}
vars:
  x: {type: int, sweep: {mode: range, start: 1, end: 12, step: 1}}
  pad: {type: str, expr: "$pad"}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
# 4 KB whatever the shell's unit (dash counts 512-byte blocks, bash 1024)
limit=8
[ "$(sh -c 'ulimit -f 8; ulimit -f')" = 8 ] || fail "ulimit -f is not available"
rc=0
(ulimit -f $limit 2>/dev/null || ulimit -f $((limit / 2)); exec "$PD" bench full.yaml -q) >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "results.csv over the size limit: exit $rc, want 1"; }
grep -q "cannot write .*/wd/run_001/results.csv: File too large" err.log || fail "results.csv not named: $(cat err.log)"
grep -q "the results were not all saved" err.log || fail "no final word on the lost results: $(cat err.log)"
# what could be written is intact: every status says succeeded
[ "$(grep -l '"status": "SUCCEEDED"' wd/run_001/exec_*/repetition_001/__iops_status.json | wc -l)" -eq 12 ] ||
    fail "status files"
# with room again, --resume writes the whole results.csv
"$PD" bench full.yaml --resume -q >/dev/null 2>err.log || { cat err.log; fail "resume with room again"; }
[ "$(tail -n +2 wd/run_001/results.csv | wc -l)" -eq 12 ] || fail "results.csv after resume"
echo "bench_full_disk: ok"
