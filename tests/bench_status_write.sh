#!/bin/sh
# paddiser bench when a repetition's files cannot be written at the end:
# --resume trusts __iops_status.json, so a status that cannot be updated is
# a warning naming the file, never a silent success; a post_stdout that
# cannot be created fails the repetition (the post script's output goes
# there as it runs), naming the file. The script replaces those files by directories, so the
# final writes fail whoever runs the test (root included).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-status.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/study.yaml" <<'EOF'
benchmark:
  name: unwritable
  workdir: ./wd
  repetitions: 1
vars:
  x:
    type: int
    sweep: {mode: list, values: [1]}
command:
  template: "true"
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      rm -f __iops_status.json && mkdir __iops_status.json post_stdout
    post:
      script: |
        #!/bin/bash
        echo post
EOF
cd "$T"
rc=0; "$PD" bench study.yaml >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc, want 1: $(cat "$T/err")"
grep -q 'warning: cannot write .*exec_0001/repetition_001/__iops_status.json' "$T/err" ||
    fail "no warning for the status file: $(cat "$T/err")"
grep -q 'post_s.sh failed (cannot create .*exec_0001/repetition_001/post_stdout: Is a directory)' "$T/err" ||
    fail "post_stdout not named: $(cat "$T/err")"
grep -q '0/1 repetitions succeeded, 1 failed' "$T/out" || fail "the repetition did not fail: $(cat "$T/out")"
grep -q 'a repetition whose status file was not written runs again on --resume' "$T/err" ||
    fail "the unsaved status not counted: $(cat "$T/err")"
echo "bench_status_write: ok"
