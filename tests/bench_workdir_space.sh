#!/bin/sh
# paddiser bench in a workdir whose path holds a space, a single quote and a
# '$': the generated scripts (probe block, post script) and the executor must
# quote every path they build, so the study runs, samples and parses as in a
# plain directory. (The template itself writes relative to the repetition
# directory, its working directory: quoting what a template expands is the
# template's business, as in IOPS.)
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-space.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir "$T/my study"
cat >"$T/my study/study.yaml" <<'EOF'
benchmark:
  name: spaced
  workdir: "./w d'q $x"
  repetitions: 1
  probes:
    resource_sampling: true
    io_sampling: true
    io_paths: ["{{ execution_dir }}"]
    sampling_interval: 0.1
vars:
  x:
    type: int
    sweep: {mode: list, values: [1, 2]}
command:
  template: "echo score={{ x * 10 }}"
scripts:
  - name: spaced
    script_template: |
      #!/bin/bash
      {{ command.template }} > out.txt
      sleep 0.3
    post:
      script: |
        #!/bin/bash
        test -s out.txt && echo post-ok > post_marker
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics: [{name: score}]
EOF
cd "$T/my study"
"$PD" bench --results-layout short study.yaml >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "bench exited $?"; }
RUN="$T/my study/w d'q \$x/run_001"
[ -d "$RUN" ] || fail "no run directory $RUN"
grep -q '2/2 repetitions succeeded' "$T/out" || fail "not all repetitions succeeded: $(cat "$T/out")"
grep -qx 'exec_0001,1,1,10' "$RUN/results.csv" || fail "results.csv: $(cat "$RUN/results.csv")"
grep -qx 'exec_0002,1,2,20' "$RUN/results.csv" || fail "results.csv: $(cat "$RUN/results.csv")"
for e in 0001 0002; do
    rep="$RUN/exec_$e/repetition_001"
    [ "$(cat "$rep/post_marker")" = post-ok ] || fail "post script did not run in exec_$e"
    ls "$rep"/__iops_trace_*.csv >/dev/null 2>&1 || fail "no CPU trace in exec_$e: $(cat "$rep/stderr")"
    ls "$rep"/__iops_io_trace_*.csv >/dev/null 2>&1 || fail "no I/O trace in exec_$e: $(cat "$rep/stderr")"
    ! grep -q 'No such file\|syntax error\|unexpected' "$rep/stderr" || fail "script errors in exec_$e: $(cat "$rep/stderr")"
done
[ "$(grep -c '^exec_000' "$RUN/__iops_resource_summary.csv")" = 2 ] || fail "summary rows: $(cat "$RUN/__iops_resource_summary.csv")"
grep -q "class=\"pd-chart pd-ts\"" "$RUN/report.html" || fail "report has no time series"

# --resume in the same directory: everything already succeeded
"$PD" bench study.yaml --resume >"$T/out2" 2>"$T/err2" || { cat "$T/err2" >&2; fail "resume exited $?"; }
grep -q '2 of 2 repetitions already succeeded' "$T/err2" || fail "resume: $(cat "$T/err2")"
echo "bench_workdir_space: ok"
