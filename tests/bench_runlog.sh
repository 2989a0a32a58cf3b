#!/bin/sh
# The run's log (issue #16, item 7), local executor: RUN_DIR/paddiser.log
# has the version, host, command line, start and end times and one line per
# repetition started and finished; --log-level filters the repetition lines;
# --log-file puts it elsewhere; --resume appends; a link planted where the
# log goes is not followed (nothing runs), nor is a FIFO opened.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-runlog.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"
version=$("$PD" --version | awk '{ print $2 }')

cat >study.yaml <<'EOF'
benchmark: {name: logged, workdir: ./wd, repetitions: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "printf 'score=%s\\n' {{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      [ {{ x }} -ne 2 ] || exit 4
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics: [{name: score}]
EOF

# 1. the default log, INFO
rc=0; "$PD" bench study.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc, want 1"
L=wd/run_001/paddiser.log
[ -f "$L" ] && [ ! -L "$L" ] || fail "no $L"
ts='^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \| '
grep -Eq "${ts}INFO  \| ==== paddiser bench $version\$" "$L" || { cat "$L"; fail "no version line"; }
grep -Eq "${ts}INFO  \| host: $(hostname), pid [0-9]+\$" "$L" || fail "no host line: $(cat "$L")"
grep -Fq "| command line: paddiser bench study.yaml -q" "$L" || fail "no command line: $(cat "$L")"
grep -Fq "| run directory: $PWD/wd/run_001" "$L" || fail "no run directory"
grep -Eq "${ts}INFO  \| started: [0-9-]+ [0-9:]+\$" "$L" || fail "no start time"
grep -Eq "${ts}WARNING \| ended: [0-9-]+ [0-9:]+ \([0-9.]+ s\), exit status 1\$" "$L" || fail "no end line: $(cat "$L")"
grep -Fq "| 2/4 repetitions succeeded, 2 failed, 0 cancelled or not started" "$L" || fail "no totals"
for r in 1 2; do
    grep -Fq "| exec_0001 rep $r/2 started" "$L" || fail "no start of exec_0001 rep $r"
    grep -Eq "INFO  \| exec_0001 rep $r/2 SUCCEEDED in [0-9.]+ s \| score=1\$" "$L" || fail "exec_0001 rep $r: $(cat "$L")"
    grep -Eq "WARNING \| exec_0002 rep $r/2 FAILED \(exit 4\) in [0-9.]+ s\$" "$L" || fail "exec_0002 rep $r: $(cat "$L")"
done
[ "$(grep -c "" "$L")" -eq 18 ] || fail "want 18 lines (8 header, 8 repetition, 2 end): $(cat "$L")"
grep -q "DEBUG" "$L" && fail "DEBUG lines at INFO"

# 2. --resume appends a second invocation; --log-level WARNING keeps only the failures
"$PD" bench study.yaml -q --resume wd/run_001 --log-level warning >/dev/null 2>&1 || true
[ "$(grep -c '==== paddiser bench' "$L")" -eq 2 ] || fail "--resume did not append: $(cat "$L")"
grep -Fq "==== paddiser bench $version (--resume)" "$L" || fail "resume header"
tail -n +19 "$L" >second.log
grep -q "exec_0002 rep 1/2 FAILED" second.log || fail "resume: failure not logged"
grep -q "rep [0-9]*/[0-9]* started$" second.log && fail "--log-level warning: start lines logged: $(cat second.log)"
grep -q "| command line: .*--log-level warning" second.log || fail "resume: header missing at WARNING"
grep -q "| ended: " second.log || fail "resume: end line missing at WARNING"

# 3. --log-file elsewhere (relative to the current directory), DEBUG
rc=0; "$PD" bench study.yaml -q --log-file my.log --log-level DEBUG >/dev/null 2>&1 || rc=$?
[ -f my.log ] || fail "--log-file my.log not written"
[ ! -e wd/run_002/paddiser.log ] || fail "--log-file: the default log was written too"
grep -q "DEBUG | exec_0001 rep 1: $PWD/wd/run_002/exec_0001/repetition_001/run_s.sh" my.log || fail "DEBUG: $(cat my.log)"
rc=0; "$PD" bench study.yaml --log-level chatty 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--log-level must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not 'chatty'" err.log ||
    fail "bad --log-level: exit $rc $(cat err.log)"

# 4. a link planted where the log goes is not followed: nothing runs
echo keep >victim
ln -s "$PWD/victim" planted.log
rc=0; "$PD" bench study.yaml -q --log-file planted.log >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] || fail "planted link: exit $rc, want 2"
grep -q "cannot create the log planted.log: it is a symbolic link; nothing was run" err.log || fail "$(cat err.log)"
[ "$(cat victim)" = keep ] || fail "the link was followed"
[ ! -e wd/run_004 ] && [ ! -e wd/run_003/exec_0001 ] || fail "a run directory was laid out: $(ls wd)"
# in the run directory: a --resume whose paddiser.log became a link
rm wd/run_001/paddiser.log
ln -s "$PWD/victim" wd/run_001/paddiser.log
rc=0; "$PD" bench study.yaml -q --resume wd/run_001 >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q "it is a symbolic link" err.log || fail "resume over a link: exit $rc $(cat err.log)"
[ "$(cat victim)" = keep ] || fail "the link was followed on --resume"
# a FIFO is refused at once (not opened for writing, which would wait for a reader)
mkfifo fifo.log
rc=0; timeout 10 "$PD" bench study.yaml -q --log-file fifo.log >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q "fifo.log: not a regular file" err.log || fail "FIFO: exit $rc $(cat err.log)"
# --dry-run writes no log
"$PD" bench study.yaml --dry-run --log-file dry.log >/dev/null 2>&1 || fail "dry run"
[ ! -e dry.log ] || fail "--dry-run wrote a log"
echo "bench_runlog: ok"
