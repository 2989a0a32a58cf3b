#!/bin/sh
# SIGINT/SIGTERM are honoured in every phase (issue #13, item 9): while a
# post script runs, while a parser script runs, and while the run summary
# and report are written, the harness stops the child, keeps what it has
# and exits 130 (SIGINT) or 143 (SIGTERM) at once. The old harness ignored
# both there: the post script ran to its end and the run exited 0.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-signals.XXXXXX)
cleanup() {
    [ -z "${pid:-}" ] || kill -9 "$pid" 2>/dev/null || true
    for p in "$T"/*.pid; do [ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# PID's children, from /proc (procps, hence pgrep, is not in a minimal root)
children() { cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$1" '{ pid = $1; sub(/.*\) /, ""); if ($2 == p) print pid }'; }
cd "$T"
status() { sed -n 's/.*"status": "\(.*\)".*/\1/p' "$1/__iops_status.json"; }
# running, not a zombie waiting for a reaper
alive() { s=$(sed "s/.*) //" "/proc/$(cat "$1")/stat" 2>/dev/null | cut -c1); [ -n "$s" ] && [ "$s" != Z ]; }
wait_for() { # FILE WHAT: up to 10 s
    i=0
    until [ -e "$1" ]; do i=$((i + 1)); [ $i -lt 200 ] || fail "$2 never happened"; sleep 0.05; done
}
# rc: the harness's exit status; it must end within 8 s of the signal (the
# 3 s grace for the child, with room for a slow machine)
ended() {
    i=0
    while [ "$(sed "s/.*) //" /proc/$pid/stat 2>/dev/null | cut -c1)" != Z ] && kill -0 $pid 2>/dev/null &&
        [ $i -lt 160 ]; do i=$((i + 1)); sleep 0.05; done
    [ $i -lt 160 ] || { kill -9 $pid; fail "$1: the harness ignored the signal"; }
    rc=0; wait $pid || rc=$?
    pid=
}

# a slow post script: SIGINT stops it and the run
cat >post.yaml <<EOF
benchmark: {name: sig, workdir: ./wd_post, repetitions: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > m.txt
    post:
      script: |
        sleep 1000 & echo \$! > $T/post_sleep.pid
        touch $T/post.started
        wait
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
"$PD" bench post.yaml -q >out.log 2>err.log &
pid=$!
wait_for post.started "the post script"
kill -INT $pid
ended "post script"
[ "$rc" -eq 130 ] || { cat err.log; fail "SIGINT in a post script: exit $rc, want 130"; }
R=wd_post/run_001
[ "$(status $R/exec_0001/repetition_001)" = CANCELLED ] || fail "post: $(cat $R/exec_0001/repetition_001/__iops_status.json)"
[ "$(status $R/exec_0001/repetition_002)" = PENDING ] || fail "post: repetition 2 should not have started"
! alive post_sleep.pid || fail "the post script's sleep outlived the harness"
grep -q "resume with: paddiser bench post.yaml --resume" err.log || fail "no resume hint: $(cat err.log)"
[ -f $R/results.csv ] || fail "results.csv not written"
! grep -q "repetitions succeeded" out.log || fail "an interrupted run printed its totals: $(cat out.log)"

# a slow parser script: SIGTERM stops it and the run
if command -v python3 >/dev/null; then
    cat >parser.yaml <<EOF
benchmark: {name: sig, workdir: ./wd_parser}
vars:
  x: {type: int, sweep: {mode: list, values: [1]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > m.txt
    parser:
      file: m.txt
      metrics: [{name: v}]
      parser_script: |
        import time
        def parse(path):
            open('$T/parser.started', 'w').close()
            time.sleep(1000)
EOF
    "$PD" bench parser.yaml -q >out.log 2>err.log &
    pid=$!
    wait_for parser.started "the parser script"
    kill -TERM $pid
    ended "parser script"
    [ "$rc" -eq 143 ] || { cat err.log; fail "SIGTERM in a parser script: exit $rc, want 143"; }
    [ "$(status wd_parser/run_001/exec_0001/repetition_001)" = CANCELLED ] || fail "parser: not cancelled"
fi

# the summary and report phase (a 1,000,000-row trace keeps it busy for a
# while): SIGTERM while it runs ends the harness with 143, no totals, no report
cat >summary.yaml <<'EOF'
benchmark: {name: sig, workdir: ./wd_summary}
vars:
  x: {type: int, sweep: {mode: list, values: [1]}}
command: {template: "true"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      echo timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb >__iops_trace_h_1.csv
      seq -f '%.0f.5,h,0,10.0,5.0,85.0,1000,500' 1 1000000 >>__iops_trace_h_1.csv
EOF
"$PD" bench summary.yaml -q >out.log 2>err.log &
pid=$!
# the phase runs in a child of the harness (a paddiser, not a script's bash):
# stop it there, so the signal surely comes while the phase is under way
i=0 child=
while [ -z "$child" ]; do
    for c in $(children $pid); do
        [ "$(readlink /proc/$c/exe 2>/dev/null)" = "$PD" ] && child=$c
    done
    [ -n "$child" ] && break
    kill -0 $pid 2>/dev/null || { cat out.log err.log; fail "the run ended before its summary phase was seen"; }
    i=$((i + 1)); [ $i -lt 400 ] || fail "no summary phase within 20 s"; sleep 0.02
done
kill -STOP "$child"
kill -TERM $pid
ended "summary phase"
[ "$rc" -eq 143 ] || { cat err.log; fail "SIGTERM in the summary phase: exit $rc, want 143"; }
grep -q "interrupted while writing the run summary and report" err.log || fail "not said: $(cat err.log)"
! grep -q "repetitions succeeded" out.log || fail "an interrupted run printed its totals: $(cat out.log)"
[ ! -e wd_summary/run_001/report.html ] || fail "report.html written after the interrupt"
! kill -0 "$child" 2>/dev/null || fail "the summary child outlived the harness"

# kill -9 of the harness: nothing can be stopped or written then, but the
# kernel drops the run directory's lock, the repetition in flight stays
# "running" on disk, and --resume runs it and the ones not started. Its script
# (and what it started) outlives the harness; --resume finds its process group
# in __paddiser_launch.json, ends it and says so before the repetition runs
# again (issue #13, item 6). The old harness left it running: the new attempt
# ran alongside it in the same directory.
cat >kill9.yaml <<EOF
# random_seed 1: IOPS's shuffle runs 1, 2, 3 in number order
benchmark: {name: sig, workdir: ./wd_kill9, random_seed: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -eq 2 ] && [ -e $T/slow.flag ]; then
          sleep 1000 & echo \$! > $T/orphan_sleep.pid; echo \$\$ > $T/orphan.pid; wait
      fi
      if [ {{ x }} -eq 2 ] && [ -e $T/orphan.pid ]; then # the new attempt: is the old one still there?
          for f in $T/orphan.pid $T/orphan_sleep.pid; do
              s=\$(sed 's/.*) //' /proc/\$(cat \$f)/stat 2>/dev/null | cut -c1)
              [ -z "\$s" ] || [ "\$s" = Z ] || echo "\$f" >> $T/overlap
          done
      fi
      {{ command.template }} > m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
touch slow.flag
"$PD" bench --results-layout short kill9.yaml -q >/dev/null 2>err.log &
pid=$!
wait_for orphan.pid "exec_0002"
kill -9 $pid
ended "kill -9"
R=wd_kill9/run_001
[ "$(status $R/exec_0002/repetition_001)" = RUNNING ] || fail "kill -9: exec_0002 should be running on disk"
alive orphan.pid || fail "kill -9: the script did not outlive the harness"
alive orphan_sleep.pid || fail "kill -9: the script's sleep did not outlive the harness"
rm slow.flag
"$PD" bench kill9.yaml --resume -q >/dev/null 2>err.log || { cat err.log; fail "resume after kill -9"; }
! alive orphan.pid || fail "--resume left the previous attempt's script running (pid $(cat orphan.pid))"
! alive orphan_sleep.pid || fail "--resume left the previous attempt's sleep running (pid $(cat orphan_sleep.pid))"
[ ! -e overlap ] || fail "the new attempt of exec_0002 ran while the old one was alive: $(cat overlap)"
grep -q "exec_0002 rep 1: its previous attempt (process group $(cat orphan.pid)) is still running; ending it" err.log ||
    fail "--resume did not say it ended the previous attempt: $(cat err.log)"
[ "$(grep -c "previous attempt" err.log)" -eq 1 ] || fail "--resume named other repetitions: $(cat err.log)"
printf 'execution_id,repetition,x,v\nexec_0001,1,1,1\nexec_0002,1,2,2\nexec_0003,1,3,3\n' >exp.csv
diff exp.csv $R/results.csv >&2 || fail "results.csv after kill -9 and --resume"
# a record from another host (the attempt "running" on disk) is not acted
# on, and said so
sed 's/"host": "[^"]*"/"host": "elsewhere.invalid"/' $R/exec_0002/repetition_001/__paddiser_launch.json >rec
mv rec $R/exec_0002/repetition_001/__paddiser_launch.json
sed 's/"status": "SUCCEEDED"/"status": "RUNNING"/' $R/exec_0002/repetition_001/__iops_status.json >st
mv st $R/exec_0002/repetition_001/__iops_status.json
"$PD" bench kill9.yaml --resume -q >/dev/null 2>err.log || { cat err.log; fail "resume with another host's record"; }
grep -q "exec_0002 rep 1: its previous attempt ran on host elsewhere.invalid (process group [0-9]*), which cannot be checked from" err.log ||
    fail "another host's record: not said: $(cat err.log)"
echo "bench_signals: ok"
