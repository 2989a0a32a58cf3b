#!/bin/sh
# benchmark.timeout (issue #13, item 9): a script, post script or parser
# script running past it is stopped (SIGTERM to its process group, SIGKILL
# after a grace) and its repetition ends "timed_out", counted as failed
# (exit 1), while the next repetitions still run. The old harness had no
# timeout (the key was an error, and a hung script hung the run).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-timeout.XXXXXX)
cleanup() {
    for p in "$T"/*.pid; do [ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"
status() { sed -n 's/.*"status": "\(.*\)".*/\1/p' "$1/__iops_status.json"; }
# running, not a zombie waiting for a reaper
alive() { s=$(sed "s/.*) //" "/proc/$(cat "$1")/stat" 2>/dev/null | cut -c1); [ -n "$s" ] && [ "$s" != Z ]; }

# x=2 hangs (with a sleep in the background of its group too); 1 and 3
# succeed, 3 leaving a sleep behind in its group (issue #13, item 13: the
# old harness left it running)
cat >script.yaml <<EOF
benchmark: {name: to, workdir: ./wd_script, timeout: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -eq 2 ]; then sleep 1000 & echo \$! > $T/bg.pid; sleep 1000; fi
      if [ {{ x }} -eq 3 ]; then sleep 1000 >/dev/null 2>&1 & echo \$! > $T/bg_ok.pid; fi
      {{ command.template }} > m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
start=$(date +%s)
rc=0; "$PD" bench --results-layout short script.yaml >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "script timeout: exit $rc, want 1"; }
[ $(($(date +%s) - start)) -lt 20 ] || fail "script timeout: the run took $(($(date +%s) - start)) s"
R=wd_script/run_001
[ "$(status $R/exec_0002/repetition_001)" = TIMEOUT ] || fail "exec_0002: $(cat $R/exec_0002/repetition_001/__iops_status.json)"
[ "$(status $R/exec_0003/repetition_001)" = SUCCEEDED ] || fail "exec_0003 did not run after the timeout"
grep -q "exec_0002 rep 1 TIMED OUT (benchmark.timeout 1 s" err.log || fail "no TIMED OUT line: $(cat err.log)"
grep -q "2/3 repetitions succeeded, 1 failed (1 timed out)" out.log || fail "totals: $(cat out.log)"
printf 'execution_id,repetition,x,v\nexec_0001,1,1,1\nexec_0003,1,3,3\n' >exp.csv
diff exp.csv $R/results.csv >&2 || fail "results.csv"
! alive bg.pid || fail "the timed-out script's background sleep is still running"
! alive bg_ok.pid || fail "the background sleep of a script that succeeded is still running"
# --resume runs the timed-out repetition again
sed -i 's/sleep 1000; fi/true; fi/' script.yaml
"$PD" bench script.yaml --resume -q >/dev/null 2>err.log || { cat err.log; fail "resume after a timeout"; }
[ "$(status $R/exec_0002/repetition_001)" = SUCCEEDED ] || fail "resume did not run exec_0002 again"

# a post script past the timeout times its repetition out; so does a parser script
cat >post.yaml <<'EOF'
benchmark: {name: to, workdir: ./wd_post, timeout: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > m.txt
    post:
      script: |
        echo post-ran
        if [ {{ x }} -eq 1 ]; then sleep 1000; fi
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
rc=0; "$PD" bench post.yaml -q >out.log 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "post timeout: exit $rc, want 1"; }
R=wd_post/run_001
[ "$(status $R/exec_0001/repetition_001)" = TIMEOUT ] || fail "post: $(cat $R/exec_0001/repetition_001/__iops_status.json)"
[ "$(status $R/exec_0002/repetition_001)" = SUCCEEDED ] || fail "post: exec_0002"
grep -q "post_s.sh: bash did not finish within 1 s" err.log || fail "post timeout not said: $(cat err.log)"
grep -qx post-ran $R/exec_0001/repetition_001/post_stdout || fail "post_stdout not written as it ran"

if command -v python3 >/dev/null; then
    sed -e 's/wd_post/wd_parser/' -e '/post:/,$d' post.yaml >parser.yaml
    cat >>parser.yaml <<'EOF'
    parser:
      file: m.txt
      metrics: [{name: v}]
      parser_script: |
        import sys, time
        def parse(path):
            v = open(path).read().split('=')[1].strip()
            if v == '1':
                print('parser waits', file=sys.stderr, flush=True)
                time.sleep(1000)
            return {'v': v}
EOF
    rc=0; "$PD" bench parser.yaml -q >out.log 2>err.log || rc=$?
    [ "$rc" -eq 1 ] || { cat err.log; fail "parser timeout: exit $rc, want 1"; }
    R=wd_parser/run_001
    [ "$(status $R/exec_0001/repetition_001)" = TIMEOUT ] || fail "parser: $(cat $R/exec_0001/repetition_001/__iops_status.json)"
    [ "$(status $R/exec_0002/repetition_001)" = SUCCEEDED ] || fail "parser: exec_0002"
    grep -q "did not finish within 1 s" err.log || fail "parser timeout not said: $(cat err.log)"
    grep -q "parser waits" $R/exec_0001/repetition_001/__iops_parser.log || fail "parser stderr not in its log"
fi

# the key is checked
sed 's/timeout: 1}/timeout: -5}/' script.yaml >bad.yaml
rc=0; "$PD" bench bad.yaml --dry-run >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q "bad.yaml:1: benchmark.timeout: must be a number of seconds > 0" err.log ||
    { cat err.log; fail "benchmark.timeout: -5 accepted (exit $rc)"; }
echo "bench_timeout: ok"
