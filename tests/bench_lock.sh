#!/bin/sh
# One harness per run directory (issue #13, item 6): while a run holds its
# directory, a --resume of it refuses at once, naming the holder, instead of
# running repetitions a second time (two concurrent resumes ran 5 of 6
# repetitions twice); once the holder ends, --resume works. A lock file
# planted as a symbolic link is refused, its target untouched.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-lock.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"
# random_seed 2: IOPS's shuffle runs exec_0001's first repetition first
cat >study.yaml <<EOF
benchmark: {name: lock, workdir: ./wd, repetitions: 2, parallel: 1, random_seed: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      i=0
      while [ -e $T/hold ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
      {{ command.template }} >> {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
touch hold
"$PD" bench study.yaml -q >/dev/null 2>first.log &
pid=$!
i=0
until grep -qs '"status": "RUNNING"' wd/run_001/exec_0001/repetition_001/__iops_status.json; do
    i=$((i + 1)); [ $i -lt 200 ] || { rm -f hold; fail "the first run never started"; }; sleep 0.05
done
rc=0
timeout 20 "$PD" bench study.yaml --resume -q >/dev/null 2>second.log || rc=$?
rm hold
wait $pid || { cat first.log; fail "the first run failed"; }
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "resume of a held directory: exit $rc: $(cat second.log)"
grep -q "wd/run_001 is in use by another paddiser bench (pid $pid)" second.log || fail "holder not named: $(cat second.log)"
[ "$(tail -n +2 wd/run_001/results.csv | wc -l)" -eq 4 ] || fail "rows: $(cat wd/run_001/results.csv)"
for m in wd/run_001/exec_000*/repetition_00*/m.txt; do
    [ "$(grep -c . "$m")" -eq 1 ] || fail "$m: ran twice"
done
"$PD" bench study.yaml --resume -q >/dev/null 2>third.log || { cat third.log; fail "resume after the holder ended"; }
# a planted link instead of the lock file
echo keep >target
rm wd/run_001/__paddiser_lock
ln -s "$T/target" wd/run_001/__paddiser_lock
rc=0
"$PD" bench study.yaml --resume -q >/dev/null 2>link.log || rc=$?
[ "$rc" -ne 0 ] || fail "a planted lock link was followed"
grep -q "cannot lock the run directory" link.log || fail "planted link: $(cat link.log)"
[ "$(cat target)" = keep ] || fail "the link's target changed"
echo "bench_lock: ok"
