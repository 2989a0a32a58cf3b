#!/bin/sh
# output.sink (issue #13, item 1): with mode append, an interrupted run and
# its --resume leave each repetition's row in the sink once (it used to
# append every succeeded row again: 9 rows for 6 repetitions), and a second
# run appends its own; with mode overwrite the sink holds the last run's
# rows only (it used to be ignored: two runs gave 12 rows). A sink that
# cannot be written makes the run exit 1.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-sink.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# random_seed 8: IOPS's shuffle runs exec 1's two repetitions, then exec 2's, then exec 3's
study() { # MODE WORKDIR
    cat <<EOF
benchmark: {name: sink, workdir: ./$2, repetitions: 2, parallel: 1, random_seed: 8}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -eq 2 ] && [ -e $T/slow.flag ]; then sleep 30; fi
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
output:
  sink: {type: csv, path: $T/sink_$1.csv, mode: $1}
EOF
}
rows() { tail -n +2 "$1" | wc -l; }

for mode in append overwrite; do
    study $mode wd_$mode >$mode.yaml
    touch slow.flag
    "$PD" bench $mode.yaml -q >/dev/null 2>int.log &
    pid=$!
    i=0
    until grep -qs '"status": "RUNNING"' wd_$mode/run_001/exec_0002/repetition_001/__iops_status.json; do
        i=$((i + 1)); [ $i -lt 200 ] || fail "$mode: exec_0002 never started"; sleep 0.05
    done
    kill -INT $pid
    rc=0; wait $pid || rc=$?
    [ "$rc" -eq 130 ] || { cat int.log; fail "$mode: interrupted run should exit 130, got $rc"; }
    [ "$(rows sink_$mode.csv)" -eq 2 ] || fail "$mode: after the interrupt: $(cat sink_$mode.csv)"
    rm slow.flag
    "$PD" bench $mode.yaml --resume -q >/dev/null 2>res.log || { cat res.log; fail "$mode: resume failed"; }
    [ "$(rows sink_$mode.csv)" -eq 6 ] || fail "$mode: 6 repetitions after resume: $(cat sink_$mode.csv)"
    [ "$(tail -n +2 sink_$mode.csv | sort -u | wc -l)" -eq 6 ] || fail "$mode: duplicate rows: $(cat sink_$mode.csv)"
    diff wd_$mode/run_001/results.csv sink_$mode.csv >&2 || fail "$mode: sink differs from results.csv"
    # resuming a finished run appends nothing again
    "$PD" bench $mode.yaml --resume -q >/dev/null 2>&1 || fail "$mode: second resume failed"
    [ "$(rows sink_$mode.csv)" -eq 6 ] || fail "$mode: a second resume added rows: $(cat sink_$mode.csv)"
    # a second complete run
    "$PD" bench $mode.yaml -q >/dev/null 2>&1 || fail "$mode: second run failed"
    want=6
    [ $mode = append ] && want=12
    [ "$(rows sink_$mode.csv)" -eq $want ] || fail "$mode: after two runs want $want rows: $(cat sink_$mode.csv)"
done
# a sink that cannot be written fails the run (it used to exit 0 with a warning)
study append wd_bad | sed "s|path: $T/sink_append.csv|path: $T/adir|" >bad.yaml
mkdir adir
rm -f slow.flag
rc=0; "$PD" bench bad.yaml -q >/dev/null 2>bad.log || rc=$?
[ "$rc" -eq 1 ] || { cat bad.log; fail "unwritable sink: exit $rc, want 1"; }
grep -q "cannot write output.sink.path $T/adir" bad.log || fail "unwritable sink not named: $(cat bad.log)"
grep -q "results were not all saved" bad.log || fail "no final word on the lost results: $(cat bad.log)"
echo "bench_sink: ok"
