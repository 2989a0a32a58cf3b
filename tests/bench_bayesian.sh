#!/bin/sh
# search_method: bayesian (issue #16 item 11): small studies on the local
# executor whose metric is a known function of the variables. Checks the
# sequential numbering (exec_0001 is the first point, repetitions run one
# after another), that n_iterations distinct points run, that the search
# reaches the grid's optimum, that the same random_seed gives the same
# points, that objective: maximize of -f picks what minimize of f picks,
# exhaustive_vars (every value for each point; checked with python3 when
# there is one) and fallback_to_exhaustive.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-bayesian.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# $1 objective, $2 metric expression, $3 n_iterations, $4 extra benchmark lines, $5 extra vars
study() {
    cat <<YAML
benchmark:
  name: "bayes"
  workdir: "$T/wd"
  repetitions: 2
  random_seed: 7
  executor: "local"
  search_method: "bayesian"
  bayesian_config:
    objective_metric: "y"
    objective: "$1"
    n_iterations: $3
    n_initial_points: 4
$4
vars:
  a: {type: int, sweep: {mode: range, start: 0, end: 8}}
  b: {type: int, sweep: {mode: range, start: 0, end: 9}}
$5
command:
  template: "true"
scripts:
  - name: "s"
    script_template: |
      #!/bin/bash
      echo "{{ execution_id }} {{ repetition }} {{ a }} {{ b }}" >> {{ workdir }}/order.txt
      echo "y={{ $2 }}" > {{ execution_dir }}/out.txt
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics:
        - name: y
YAML
}
F='(a - 6) * (a - 6) + (b - 2) * (b - 2) + repetition'
run() { # $1: study file; prints the run's order.txt path
    "$PD" bench -q --parallel 1 "$1" >"$1.out" 2>"$1.err" || { cat "$1.err" >&2; fail "$1: paddiser bench"; }
    ls -d "$T"/wd/run_* | tail -1
}

study minimize "$F" 12 "" "" >min.yaml
R=$(run min.yaml)
n=$(ls -d "$R"/exec_* | wc -l)
[ "$n" -eq 12 ] || fail "minimize: $n executions, want 12"
[ "$(wc -l <"$R/order.txt")" -eq 24 ] || fail "minimize: $(wc -l <"$R/order.txt") runs, want 24"
# exec ids 1..12 in run order, repetition 1 then 2 of each
awk '{ want_id = int((NR + 1) / 2); want_rep = (NR % 2) ? 1 : 2
       if ($1 != want_id || $2 != want_rep) { print "line " NR ": " $0; exit 1 } }' "$R/order.txt" ||
    fail "minimize: run order $(tr '\n' ' ' <"$R/order.txt")"
[ "$(awk '{ print $3, $4 }' "$R/order.txt" | sort -u | wc -l)" -eq 12 ] || fail "minimize: a point ran twice"
grep -q '^[0-9]* [12] 6 2$' "$R/order.txt" || fail "minimize: optimum (6, 2) not reached: $(tr '\n' ' ' <"$R/order.txt")"
cp "$R/order.txt" min.order

# deterministic for a seed
R=$(run min.yaml)
cmp -s min.order "$R/order.txt" || fail "same seed, other points: $(tr '\n' ' ' <"$R/order.txt")"

# maximize -f: the same search
study maximize "-($F)" 12 "" "" >max.yaml
R=$(run max.yaml)
cmp -s min.order "$R/order.txt" || fail "maximize -f differs from minimize f: $(tr '\n' ' ' <"$R/order.txt")"

# exhaustive_vars: every e for each point, numbered one after another
study minimize "$F + e" 5 '  exhaustive_vars: ["e"]' '  e: {type: int, sweep: {mode: list, values: [1, 2]}}' >exh.yaml
R=$(run exh.yaml)
n=$(ls -d "$R"/exec_* | wc -l)
[ "$n" -eq 10 ] || fail "exhaustive_vars: $n executions, want 10 (5 points x 2)"
if command -v python3 >/dev/null 2>&1; then
python3 - "$R" <<'PY' || fail "exhaustive_vars: executions of a point"
import json, sys
run = sys.argv[1]
p = [json.load(open("%s/exec_%04d/__iops_params.json" % (run, i))) for i in range(1, 11)]
for k in range(0, 10, 2):
    a, b = p[k], p[k + 1]
    assert (a["a"], a["b"]) == (b["a"], b["b"]), (a, b)
    assert (a["e"], b["e"]) == (1, 2), (a, b)
assert len({(x["a"], x["b"]) for x in p}) == 5
PY
fi

# n_iterations >= the 90 points: the whole study runs (fallback_to_exhaustive)
study minimize "$F" 90 "" "" | sed 's/repetitions: 2/repetitions: 1/' >all.yaml
R=$(run all.yaml)
n=$(ls -d "$R"/exec_* | wc -l)
[ "$n" -eq 90 ] || fail "fallback_to_exhaustive: $n executions, want 90"
grep -q "running all of them (fallback_to_exhaustive)" all.yaml.err || fail "fallback: no warning: $(cat all.yaml.err)"
# Ctrl-C (the third run sends SIGINT to paddiser, its parent): exit 130,
# and the message says a bayesian search cannot be resumed (--resume
# refuses it) instead of printing a --resume command
study minimize "$F" 12 "" "" |
    sed 's|^      echo "{{ execution_id }} |      if [ {{ execution_id }} -eq 2 ] \&\& [ {{ repetition }} -eq 1 ]; then kill -INT $PPID; sleep 1; fi\n      echo "{{ execution_id }} |' >int.yaml
grep -q 'kill -INT' int.yaml || fail "int.yaml"
rc=0
"$PD" bench -q --parallel 1 int.yaml >int.out 2>int.err || rc=$?
[ "$rc" -eq 130 ] || { cat int.err; fail "interrupted: exit $rc, expected 130"; }
grep -q 'a bayesian search cannot be resumed: start a new run' int.err || { cat int.err; fail "interrupted: message"; }
! grep -q 'resume with' int.err || { cat int.err; fail "interrupted: a --resume hint"; }
echo "bench_bayesian: OK"
