#!/bin/sh
# A hostile run directory (issue #13): links planted where the harness
# writes (a repetition's stdout/stderr, post_stdout/post_stderr,
# __iops_parser.log, __iops_status.json, results.csv) are never written
# through on --resume: files it creates are opened without following links,
# and files it rewrites are replaced atomically (a temporary with an
# unpredictable name, renamed over the link). A link where the post
# script's output goes fails that repetition, naming the file.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-links.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

cat >links.yaml <<EOF
benchmark: {name: links, workdir: ./wd}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      [ {{ x }} -eq 1 ] || [ ! -e $T/fail.flag ] || exit 3
      {{ command.template }} > m.txt
      echo out; echo err >&2
    post: {script: "echo post; echo post-err >&2"}
    parser:
      file: m.txt
      metrics: [{name: v}]
      parser_script: |
        import sys
        def parse(path):
            print('parser says', file=sys.stderr)
            return dict([open(path).read().strip().split('=')])
EOF
touch fail.flag
rc=0; "$PD" bench links.yaml -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "first run: exit $rc, want 1"; }
rm fail.flag
R=wd/run_001
mkdir victim
for f in stdout stderr parser_log status results post_stdout; do echo "victim $f" >victim/$f; done
D=$R/exec_0002/repetition_001 # runs again on --resume, its files replaced by links
ln -sf "$T/victim/stdout" $D/stdout
ln -sf "$T/victim/stderr" $D/stderr
ln -sf "$T/victim/status" $D/__iops_status.json
ln -sf "$T/victim/parser_log" $D/__iops_parser.log
ln -sf "$T/victim/results" $R/results.csv
E=$R/exec_0003/repetition_001 # its post script cannot write its output
ln -sf "$T/victim/post_stdout" $E/post_stdout
rc=0; "$PD" bench links.yaml --resume -q >/dev/null 2>err.log || rc=$?
[ "$rc" -eq 1 ] || { cat err.log; fail "resume: exit $rc, want 1 (exec_0003's post output is a link)"; }
for f in stdout stderr parser_log status results post_stdout; do
    [ "$(cat victim/$f)" = "victim $f" ] || fail "written through a planted link: victim/$f: $(cat victim/$f)"
done
[ -f $R/results.csv ] && [ ! -L $R/results.csv ] || fail "results.csv is still a link"
[ -f $D/__iops_status.json ] && [ ! -L $D/__iops_status.json ] || fail "the status file is still a link"
grep -q '"status": "SUCCEEDED"' $D/__iops_status.json || fail "exec_0002 did not succeed on resume"
[ "$(cat $D/stdout)" = out ] || fail "exec_0002's stdout: $(cat $D/stdout)"
grep -q "post_s.sh failed (cannot create .*exec_0003/repetition_001/post_stdout: Too many levels of symbolic links)" err.log ||
    fail "the planted post_stdout not named: $(cat err.log)"
grep -q '"status": "FAILED"' $E/__iops_status.json || fail "exec_0003 should have failed"
echo "bench_planted_links: ok"
