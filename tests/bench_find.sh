#!/bin/sh
# paddiser find (issue #16, item 9) on runs of the local executor: IOPS
# 3.5.8's `iops find` listing (header, table, loose VAR=VALUE matching,
# --status, --show-command, --hide, --full, one execution, a workdir), and
# --watch: a plain snapshot per change when stdout is not a terminal, ending
# when the run has finished or ended, 130 on SIGINT; a live table in place
# on a terminal.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-find.XXXXXX)
cleanup() {
    for p in "$T"/*.pid; do [ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

cat >study.yaml <<'EOF'
benchmark: {name: findme, description: "a find test", workdir: ./wd, repetitions: 2, random_seed: 344}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
  mode: {type: str, sweep: {mode: list, values: [a, "b c"]}}
  flag: {type: bool, sweep: {mode: list, values: [true]}}
  y: {type: float, expr: "x / 2"}
  long: {type: str, expr: "/a/very/long/path/that/goes/on/and/on/{{ mode }}"}
command: {template: "printf 'score=%s\\n' {{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      [ {{ x }} -ne 2 ] || [ "{{ mode }}" != a ] || exit 3
EOF
"$PD" bench study.yaml -q >/dev/null 2>&1 || true
R=wd/run_001

# 1. the whole run, as iops find prints it
"$PD" find $R >out.txt || fail "find: exit $?"
cat >want.txt <<'EOF'
Benchmark: findme
Description: a find test
Host: HOST
Executed: TIME


Path       Status     flag  long                            mode  x  y  
------------------------------------------------------------------------
exec_0001  SUCCEEDED  True  .../path/that/goes/on/and/on/a  a     1  0.5
exec_0002  SUCCEEDED  True  ...ath/that/goes/on/and/on/b c  b c   1  0.5
exec_0003  FAILED     True  .../path/that/goes/on/and/on/a  a     2  1.0
exec_0004  SUCCEEDED  True  ...ath/that/goes/on/and/on/b c  b c   2  1.0
EOF
sed -e "s/^Host: .*/Host: HOST/" -e "s/^Executed: .*/Executed: TIME/" out.txt >got.txt
diff want.txt got.txt >&2 || fail "find's listing differs (above)"
grep -q "^Host: $(hostname -s)" out.txt || fail "no Host line"

# 2. filters match loosely (numbers, booleans); several filters AND
"$PD" find $R x=2.0 >out.txt
[ "$(grep -c '^exec_' out.txt)" -eq 2 ] && grep -q '^exec_0003' out.txt && grep -q '^exec_0004' out.txt ||
    fail "x=2.0: $(cat out.txt)"
"$PD" find $R flag=TRUE "mode=b c" >out.txt
[ "$(grep -c '^exec_' out.txt)" -eq 2 ] && grep -q '^exec_0002' out.txt || fail "flag=TRUE mode='b c': $(cat out.txt)"
"$PD" find $R y=1 x=1 >out.txt
grep -q "No executions match the filter (parameters: {'y': '1', 'x': '1'})" out.txt || fail "no match: $(cat out.txt)"
# 3. --status (any case), --show-command, --hide, --full
"$PD" find $R --status failed --show-command --hide long,flag >out.txt
grep -q '^Path       Status  mode  x  y    Command$' out.txt || fail "--hide/--show-command header: $(cat out.txt)"
grep -q "^exec_0003  FAILED  a     2  1.0  printf 'score=%s\\\\n' 2\$" out.txt || fail "--status failed row: $(cat out.txt)"
[ "$(grep -c '^exec_' out.txt)" -eq 1 ] || fail "--status failed: $(cat out.txt)"
"$PD" find $R --status RUNNING >out.txt
grep -q "No executions match the filter (status: RUNNING)" out.txt || fail "--status RUNNING: $(cat out.txt)"
"$PD" find $R --full mode=a >out.txt
grep -q "/a/very/long/path/that/goes/on/and/on/a" out.txt || fail "--full: $(cat out.txt)"
# 4. one execution, a workdir of runs
"$PD" find $R/exec_0003 --show-command >out.txt
for l in "Benchmark: findme" "Status: FAILED" "Error: exit code 3" "  mode: a" "  x: 2" "  y: 1.0" "Repetitions: 2" \
    "  printf 'score=%s\\n' 2"; do
    grep -qxF "$l" out.txt || fail "exec_0003: no line '$l': $(cat out.txt)"
done
"$PD" bench study.yaml -q >/dev/null 2>&1 || true
"$PD" find wd x=1 >out.txt
grep -qx "=== run_001 ===" out.txt && grep -qx "=== run_002 ===" out.txt || fail "workdir: $(cat out.txt)"
[ "$(grep -c '^exec_0001 ' out.txt)" -eq 2 ] || fail "workdir: $(cat out.txt)"
# 5. errors
rc=0; "$PD" find "$T" >out.txt 2>err.txt || rc=$?
[ "$rc" -eq 1 ] && grep -q "no execution data in" err.txt || fail "no run: exit $rc $(cat err.txt)"
rc=0; "$PD" find $R notafilter 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q "invalid filter 'notafilter' (expected VAR=VALUE)" err.txt || fail "bad filter: exit $rc"
rc=0; "$PD" find $R --watch 0 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--watch must be a number in \[0.1, 3600\]" err.txt || fail "--watch 0: exit $rc"

# 6. --watch, stdout not a terminal: a snapshot per change until the run is done
cat >slow.yaml <<'EOF'
benchmark: {name: slow, workdir: ./ws, repetitions: 1, random_seed: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "sleep 0.6"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }}
      [ {{ x }} -ne 2 ] || exit 1
EOF
"$PD" bench slow.yaml -q >/dev/null 2>&1 &
echo $! >bench.pid
i=0; until [ -e ws/run_001/__iops_index.json ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "no index"; sleep 0.05; done
rc=0; timeout 60 "$PD" find ws/run_001 --watch 0.1 >watch.txt 2>err.txt || rc=$?
[ "$rc" -eq 0 ] || fail "--watch: exit $rc: $(cat err.txt)"
wait "$(cat bench.pid)" || true
rm bench.pid
# each repetition runs 0.6 s and the watch looks every 0.1 s: it sees one
# running (a loaded machine may miss some states, not all of them)
[ "$(grep -c '^---- [0-9:]*$' watch.txt)" -ge 2 ] || fail "--watch: want several snapshots: $(cat watch.txt)"
grep -q "^exec_000[123]  RUNNING  *R " watch.txt || fail "--watch: never saw a repetition running: $(cat watch.txt)"
tail -n 12 watch.txt >last.txt
grep -q "^Progress: 3/3 repetitions finished (100%)$" last.txt || fail "--watch: last snapshot: $(cat last.txt)"
grep -q "^SUCCEEDED 2  FAILED 1$" last.txt || fail "--watch: counts: $(cat last.txt)"
grep -q "^exec_0002  FAILED     F " last.txt || fail "--watch: exec_0002: $(cat last.txt)"
grep -q "$(printf '\033')" watch.txt && fail "--watch: escape codes when not a terminal"
# a run stopped by --fail-fast ends too (its pending repetitions never start)
"$PD" bench slow.yaml -q --fail-fast >/dev/null 2>&1 || true
rc=0; timeout 20 "$PD" find ws/run_002 --watch 0.1 >watch.txt || rc=$?
[ "$rc" -eq 0 ] && grep -q "The run ended with 1 repetitions unfinished" watch.txt || fail "fail-fast run: $rc $(cat watch.txt)"

# 7. SIGINT ends a watch (130); a run that goes on
cat >long.yaml <<'EOF'
benchmark: {name: long, workdir: ./wl, repetitions: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1]}}
command: {template: "sleep 30"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }}
EOF
"$PD" bench long.yaml -q >/dev/null 2>&1 &
echo $! >bench.pid
i=0; until [ -e wl/run_001/__iops_index.json ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "no index"; sleep 0.05; done
"$PD" find wl/run_001 --watch 0.2 >watch.txt 2>&1 &
wpid=$!
i=0; until grep -q "RUNNING" watch.txt; do i=$((i + 1)); [ $i -lt 200 ] || fail "watch printed nothing"; sleep 0.05; done
kill -INT $wpid
rc=0; wait $wpid || rc=$?
[ "$rc" -eq 130 ] || fail "--watch after SIGINT: exit $rc, want 130"
kill -TERM "$(cat bench.pid)"
wait "$(cat bench.pid)" || true
rm bench.pid

# 8. on a terminal (script(1) gives it one): the table is redrawn in place
if command -v script >/dev/null 2>&1; then
    script -qec "$PD find ws/run_001 --watch 0.1" /dev/null >tty.txt 2>&1 </dev/null || true
    grep -q "$(printf '\033\\[H\033\\[2J')" tty.txt || fail "--watch on a terminal: no clear-and-home"
    grep -q "finished" tty.txt || fail "--watch on a terminal: no end line: $(cat tty.txt)"
else
    echo "bench_find: script(1) not installed: terminal watch not checked"
fi
echo "bench_find: ok"
