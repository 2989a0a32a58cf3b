#!/bin/sh
# search_method adaptive (issue #16 item 10) against runs IOPS 3.5.8 made of
# the same studies (tests/fixtures/bench/iops_adaptive, README there): the
# same probed values under the same execution numbers, in the same order,
# with the same commands, stopping where IOPS stops and for the same
# reason (adaptive_results in __iops_run_metadata.json). Also: --parallel
# and --use-cache find the same, --resume is refused, --dry-run lists the
# probes' first values, Ctrl-C stops the search, the SLURM executor (stub
# commands) probes the same. Needs python3 (the comparisons); skipped
# without it.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
FX=$(cd "${TESTS_DIR:-$(dirname "$0")}/fixtures/bench/iops_adaptive" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "bench_adaptive: SKIP (no python3)"; exit 0; }
T=$(mktemp -d /tmp/pd-bench-adaptive.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# IOPS's run (argv[1]) and paddiser's (argv[2]): the index's executions
# (number, typed params, command) and total_expected (IOPS's running
# estimate), each execution's __iops_params.json,
# and from the run metadata adaptive_results, the variables, search_method
# and test_count. With --unordered, only adaptive_results and the set of
# probed values (a parallel run numbers them as they come).
cat >compare.py <<'PY'
import glob, json, os, sys
unordered = sys.argv[1] == "--unordered"
iops_dir, pd_dir = sys.argv[2:4] if unordered else sys.argv[1:3]
def typed(d):
    return [(k, type(v).__name__, v) for k, v in d.items()]
def index(root):
    d = json.load(open(os.path.join(root, "__iops_index.json")))
    return {e: (typed(x["params"]), x["command"]) for e, x in d["executions"].items()}
def params(root):
    out = {}
    for f in glob.glob(os.path.join(root, "**", "exec_*", "__iops_params.json"), recursive=True):
        out[os.path.basename(os.path.dirname(f))] = typed(json.load(open(f)))
    return out
def meta(root):
    return json.load(open(os.path.join(root, "__iops_run_metadata.json")))
bad = []
mi, mp = meta(iops_dir), meta(pd_dir)
if mi.get("adaptive_results") != mp.get("adaptive_results"):
    bad.append("adaptive_results: IOPS %s, paddiser %s" % (mi.get("adaptive_results"), mp.get("adaptive_results")))
ii, ip = index(iops_dir), index(pd_dir)
if unordered:
    vi, vp = sorted(map(str, ii.values())), sorted(map(str, ip.values()))
    if vi != vp:
        bad.append("probed values: IOPS %s, paddiser %s" % (vi, vp))
else:
    for e in sorted(set(ii) | set(ip)):
        if ii.get(e) != ip.get(e):
            bad.append("index %s: IOPS %s, paddiser %s" % (e, ii.get(e), ip.get(e)))
    pi, pp = params(iops_dir), params(pd_dir)
    for e in sorted(set(pi) | set(pp)):
        if pi.get(e) != pp.get(e):
            bad.append("%s/__iops_params.json: IOPS %s, paddiser %s" % (e, pi.get(e), pp.get(e)))
    ti = json.load(open(os.path.join(iops_dir, "__iops_index.json")))["total_expected"]
    tp = json.load(open(os.path.join(pd_dir, "__iops_index.json")))["total_expected"]
    if ti != tp:
        bad.append("index total_expected: IOPS %s, paddiser %s" % (ti, tp))
    for k in ("search_method", "test_count"):
        if mi["benchmark"][k] != mp["benchmark"][k]:
            bad.append("benchmark.%s: IOPS %s, paddiser %s" % (k, mi["benchmark"][k], mp["benchmark"][k]))
    if mi["variables"] != mp["variables"]:
        bad.append("variables: IOPS %s, paddiser %s" % (mi["variables"], mp["variables"]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# The studies' parser_script (IOPS needs one) is left out: paddiser's own
# NAME=VALUE parser reads the same files, without starting a Python per run.
# adaptive exits 1 (one repetition failed: exit 3 is what stops nodes=2).
for s in adaptive:1 adaptive_step:0 adaptive_float:0; do
    want=${s#*:} s=${s%:*}
    sed '/parser_script: |/,/return {/d' "$FX/$s.yaml" >"$s.yaml"
    rc=0
    "$PD" bench --results-layout short --parallel 1 --workdir "$T/wd_$s" "$s.yaml" >"$s.out" 2>"$s.err" || rc=$?
    [ "$rc" -eq "$want" ] || { cat "$s.err"; fail "$s: exit $rc, expected $want"; }
    R=wd_$s/run_001
    cmp -s "$FX/$s/run_001/order.txt" "$R/order.txt" ||
        { diff "$FX/$s/run_001/order.txt" "$R/order.txt" || true; fail "$s: the probe order is not IOPS's"; }
    python3 compare.py "$FX/$s/run_001" "$R" || fail "$s: not what IOPS 3.5.8 wrote"
done
# IOPS's summary lines, on stderr
grep -q "^Adaptive probing results for 'size':" adaptive.err || fail "no probing summary"
grep -qx '  nodes=1: found=4, failed=8, iterations=4, stop_reason=condition_met' adaptive.err || fail "nodes=1 line"
grep -qx '  nodes=3: found=8, iterations=5, stop_reason=max_iterations' adaptive.err || fail "nodes=3 line"
grep -qx '  nodes=5: found=4, iterations=4, stop_reason=constraint_violation' adaptive.err || fail "nodes=5 line"
grep -qx '  (no swept vars): found=14, failed=45, iterations=4, stop_reason=condition_met' adaptive_step.err ||
    fail "(no swept vars) line"
grep -qx '  frac=0.5,zone=b: found=2.0, failed=1.0, iterations=4, stop_reason=condition_met' adaptive_float.err ||
    fail "frac=0.5,zone=b line"
# results.csv: every run that succeeded (27 of 28), with the probed size
[ "$(($(wc -l <wd_adaptive/run_001/results.csv) - 1))" -eq 27 ] || fail "results.csv rows"
grep -q '^exec_0014,2,3,8,' wd_adaptive/run_001/results.csv || fail "results.csv: exec_0014 rep 2 (nodes 3, size 8)"

# --parallel 4: one repetition per probe at a time, the same values probed
# and the same results (the numbers follow the order they are handed out)
rc=0
"$PD" bench -q --parallel 4 --workdir "$T/wd_par" adaptive.yaml >par.out 2>par.err || rc=$?
[ "$rc" -eq 1 ] || { cat par.err; fail "--parallel 4: exit $rc"; }
python3 compare.py --unordered "$FX/adaptive/run_001" wd_par/run_001 || fail "--parallel 4: not what IOPS found"

# benchmark.cache_file and --use-cache: the probes are told the cached
# results and step as before; only the repetition that failed runs again
sed 's|^  executor: local|  executor: local\n  cache_file: "./c.db"|' adaptive.yaml >cached.yaml
rc=0
"$PD" bench -q --workdir "$T/wd_cache" cached.yaml >cache1.out 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat cache1.out; fail "cache_file: exit $rc"; }
"$PD" bench --use-cache --workdir "$T/wd_cache" cached.yaml >cache2.out 2>cache2.err || true
grep -q '^cache: 27 of 28 repetitions taken from' cache2.out || { cat cache2.out cache2.err; fail "--use-cache"; }
[ "$(wc -l <wd_cache/run_002/order.txt)" -eq 1 ] || fail "--use-cache: ran more than the failed repetition"
python3 compare.py --unordered "$FX/adaptive/run_001" wd_cache/run_002 || fail "--use-cache: not what IOPS found"

# --resume: refused, as for a bayesian search, and nothing is run
rc=0
"$PD" bench --resume "$T/wd_adaptive/run_001" adaptive.yaml >res.out 2>res.err || rc=$?
[ "$rc" -eq 2 ] || fail "--resume: exit $rc, expected 2"
grep -q 'resume of an adaptive search is not supported; start a new run' res.err || { cat res.err; fail "--resume message"; }
[ "$(wc -l <wd_adaptive/run_001/order.txt)" -eq 28 ] || fail "--resume ran something"

# --dry-run: each probe at its initial value
"$PD" bench --dry-run --workdir "$T/wd_dry" adaptive.yaml >dry.out 2>dry.err || { cat dry.err; fail "--dry-run"; }
grep -q '^exec_0004: nodes=5 size=1$' dry.out || { cat dry.out; fail "--dry-run: probes"; }
[ ! -e wd_dry/run_001 ] || fail "--dry-run made a run directory"

# Ctrl-C (the script at size 4 sends SIGINT to paddiser, its parent): the
# run stops with 130, says it cannot be resumed, and plans nothing more
sed 's|^      echo "t=|      if [ {{ size }} -eq 4 ]; then kill -INT $PPID; sleep 1; fi\n      echo "t=|' \
    adaptive_step.yaml >int.yaml
grep -q 'kill -INT' int.yaml || fail "int.yaml"
rc=0
"$PD" bench --workdir "$T/wd_int" int.yaml >int.out 2>int.err || rc=$?
[ "$rc" -eq 130 ] || { cat int.err; fail "interrupted: exit $rc, expected 130"; }
grep -q 'an adaptive search cannot be resumed: start a new run' int.err || { cat int.err; fail "interrupted: message"; }
[ "$(wc -l <wd_int/run_001/order.txt)" -eq 2 ] || fail "interrupted: planned on"

# The SLURM executor (stub sbatch/squeue/sacct on PATH, as in
# bench_slurm_stub.sh): the same probes in the same order, exit 3 read from
# the job's accounting
mkdir -p stub/bin stub/jobs
export STUB_JOBS="$T/stub/jobs"
cat >stub/bin/sbatch <<'SH'
#!/bin/sh
n=$(($(cat "$STUB_JOBS/next" 2>/dev/null || echo 100) + 1)); echo $n >"$STUB_JOBS/next"
for a in "$@"; do
    case "$a" in
        --chdir=*) dir=${a#--chdir=};; --output=*) out=${a#--output=};; --error=*) err=${a#--error=};;
        --*) ;; *) script=$a;;
    esac
done
setsid sh -c 'touch "$STUB_JOBS/$2.started"; cd "$1" && SLURM_JOB_ID=$2 bash "$3" >"$4" 2>"$5"; echo $? >"$STUB_JOBS/$2.rc"' \
    job "$dir" "$n" "$script" "$out" "$err" </dev/null >/dev/null 2>&1 &
until [ -e "$STUB_JOBS/$n.started" ]; do sleep 0.01; done
echo "$n;cluster"
SH
cat >stub/bin/squeue <<'SH'
#!/bin/sh
ids=$(echo "$*" | sed 's/.*-j //' | tr ',' ' ')
for i in $ids; do [ -e "$STUB_JOBS/$i.rc" ] || echo "$i RUNNING"; done
SH
cat >stub/bin/sacct <<'SH'
#!/bin/sh
id=$(echo "$*" | sed 's/.*-j //')
rc=$(cat "$STUB_JOBS/$id.rc")
if [ "$rc" -eq 0 ]; then echo "$id|COMPLETED|0:0"; else echo "$id|FAILED|$rc:0"; fi
SH
printf '#!/bin/sh\nexit 0\n' >stub/bin/scancel
chmod +x stub/bin/*
sed 's|^  executor: local|  executor: slurm\n  slurm_options: {poll_interval: 0.05}|' adaptive.yaml >slurm.yaml
rc=0
PATH="$T/stub/bin:$PATH" "$PD" bench -q --workdir "$T/wd_slurm" slurm.yaml >slurm.out 2>slurm.err || rc=$?
[ "$rc" -eq 1 ] || { cat slurm.err; fail "slurm: exit $rc, expected 1"; }
cmp -s "$FX/adaptive/run_001/order.txt" wd_slurm/run_001/order.txt ||
    { diff "$FX/adaptive/run_001/order.txt" wd_slurm/run_001/order.txt || true; fail "slurm: the probe order is not IOPS's"; }
python3 compare.py --unordered "$FX/adaptive/run_001" wd_slurm/run_001 || fail "slurm: not what IOPS found"
grep -q '"job_id": "1' wd_slurm/run_001/exec_0010/repetition_002/__iops_status.json || fail "slurm: no job id"

echo "bench_adaptive: OK"
