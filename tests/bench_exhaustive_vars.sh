#!/bin/sh
# benchmark.exhaustive_vars (issue #16 item 4), IOPS 3.5.8 semantics
# (iops/execution/matrix.py, planner.py RandomSamplingPlanner): the listed
# variables vary fastest in the numbering whatever their place in vars:,
# and random search samples points of the other variables, each drawn point
# running with every value of the exhaustive ones. The expected numbers and
# run order come from Python's own random module replaying IOPS's steps.
# Needs python3; skipped without it.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
command -v python3 >/dev/null 2>&1 || { echo "bench_exhaustive_vars: SKIP (no python3)"; exit 0; }
T=$(mktemp -d /tmp/pd-bench-exhaustive-vars.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

study() { # $1: search_method block
    cat <<YAML
benchmark:
  name: "exhaustive vars"
  workdir: "$T/wd"
  repetitions: 2
  random_seed: 42
  executor: "local"
$1
  exhaustive_vars: ["e"]
vars:
  e: {type: int, sweep: {mode: list, values: [7, 8]}}
  a: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
  b: {type: int, sweep: {mode: list, values: [10, 20]}}
command:
  template: "true"
scripts:
  - name: "s"
    script_template: |
      #!/bin/bash
      echo "{{ execution_id }} {{ repetition }}" >> {{ workdir }}/order.txt
      echo "y={{ a * b + e }}" > {{ execution_dir }}/out.txt
    parser:
      file: "{{ execution_dir }}/out.txt"
      metrics:
        - name: y
YAML
}

# Exhaustive search: all 12, e innermost (IOPS: search product x exhaustive product).
study '  search_method: "exhaustive"' >ex.yaml
"$PD" bench --dry-run ex.yaml >ex.out 2>ex.err || { cat ex.err; fail "exhaustive dry run"; }
grep '^exec_' ex.out >ex.got
python3 - >ex.want <<'PY'
import itertools
i = 0
for a, b in itertools.product([1, 2, 3], [10, 20]):
    for e in [7, 8]:
        i += 1
        print("exec_%04d: e=%d a=%d b=%d" % (i, e, a, b))
PY
cmp -s ex.want ex.got || fail "exhaustive numbering: $(cat ex.got)"

# Random search, 2 of the 6 (a, b) points, each with e = 7 and 8.
study '  search_method: "random"
  random_config: {n_samples: 2}' >rnd.yaml
"$PD" bench -q --parallel 1 rnd.yaml >rnd.out 2>rnd.err || { cat rnd.err; fail "random run"; }
python3 - >rnd.want <<'PY'
import itertools, random
r = random.Random(42)
execs, i = [], 0
for a, b in itertools.product([1, 2, 3], [10, 20]):
    for e in [7, 8]:
        i += 1
        execs.append((i, a, b, e))
groups = {}
for x in execs:
    groups.setdefault((x[1], x[2]), []).append(x)
drawn = r.sample(list(groups), 2)
sampled = [x for k in drawn for x in groups[k]]
shuffled = r.sample(sampled, len(sampled))
active, done = list(range(len(shuffled))), [0] * len(shuffled)
while active:
    k = r._randbelow(len(active))
    p = active[k]
    done[p] += 1
    print(shuffled[p][0], done[p])
    if done[p] >= 2:
        del active[k]
PY
cmp -s rnd.want wd/run_001/order.txt ||
    fail "random order: want $(tr '\n' ' ' <rnd.want), got $(tr '\n' ' ' <wd/run_001/order.txt)"
# each drawn point ran with both values of e
n=$(ls -d wd/run_001/exec_* | wc -l)
[ "$n" -eq 4 ] || fail "random: $n executions, want 4"

# A name that is not a variable, and a derived variable, are errors.
sed 's/exhaustive_vars: \["e"\]/exhaustive_vars: ["nope"]/' ex.yaml >bad.yaml
! "$PD" bench --dry-run bad.yaml >bad.out 2>&1 || fail "unknown exhaustive var accepted"
grep -q "exhaustive_vars: 'nope' is not a variable" bad.out || fail "unknown var message: $(cat bad.out)"
echo "bench_exhaustive_vars: OK"
