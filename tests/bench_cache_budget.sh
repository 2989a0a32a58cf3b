#!/bin/sh
# paddiser bench's IOPS features of issue #16, on the local executor:
# the execution cache (benchmark.cache_file, --use-cache, --cache-only,
# cache_exclude_vars; two harnesses writing one cache at once), the
# core-hours budget (max_core_hours, cores_expr, --max-core-hours,
# --time-estimate), machines: overrides (--machine, IOPS_MACHINE,
# --resolve) and output.sink.type sqlite. Needs the sqlite3 command
# (scripts/install-deps.sh installs it).
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-cache.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null || fail "sqlite3 not on PATH (scripts/install-deps.sh installs it)"
cd "$T"

study() { # VALUES [EXTRA BENCHMARK LINE]
    cat <<EOF
benchmark:
  name: c
  workdir: ./wd
  repetitions: 2
  cache_file: ./cache/c.db
  cache_exclude_vars: [out]
  ${2:-}
vars:
  x: {type: int, sweep: {mode: list, values: [$1]}}
  out: {type: str, expr: "{{ execution_dir }}/o.txt"}
command: {template: "echo v={{ x * 10 }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      echo ran >> $T/count
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
}
ran() { [ -e count ] && wc -l <count || echo 0; }
rows() { sqlite3 cache/c.db "SELECT count(*) FROM cached_executions"; }

# ---- 1. the cache
study "1, 2, 3" >c.yaml
"$PD" bench --results-layout short c.yaml -q >o1 2>e1 || { cat e1; fail "first run"; }
[ "$(ran)" -eq 6 ] || fail "first run: $(ran) scripts ran, want 6"
[ "$(rows)" -eq 6 ] || fail "cache rows after the first run: $(rows)"
[ "$(sqlite3 cache/c.db "SELECT params_json, metrics_json FROM cached_executions WHERE repetition = 2 AND params_json = '{\"x\": 1}'")" = '{"x": 1}|{"v":10}' ] ||
    fail "cache row: $(sqlite3 cache/c.db 'SELECT * FROM cached_executions LIMIT 1')"
grep -q '"cached": false' wd/run_001/exec_0001/repetition_001/__iops_status.json || fail "run 1 status not cached=false"
"$PD" bench --results-layout short c.yaml --use-cache >o2 2>e2 || { cat e2; fail "--use-cache run"; }
[ "$(ran)" -eq 6 ] || fail "--use-cache ran $(($(ran) - 6)) scripts, want none (out differs per run: excluded)"
grep -q '^exec_0003 rep 2 from the cache$' e2 && [ "$(grep -c 'from the cache$' e2)" -eq 6 ] || fail "progress: $(cat e2)"
grep -q '"cached": true' wd/run_002/exec_0003/repetition_002/__iops_status.json || fail "cached status: $(cat wd/run_002/exec_0003/repetition_002/__iops_status.json)"
grep -q 'cache: 6 of 6 repetitions taken from' o2 || fail "--use-cache summary: $(cat o2)"
[ "$(cut -d, -f1,2,3,5 wd/run_002/results.csv)" = "$(cut -d, -f1,2,3,5 wd/run_001/results.csv)" ] ||
    fail "cached results differ: $(cat wd/run_002/results.csv)"
# without --use-cache it runs (and refreshes the entries, one per key)
"$PD" bench c.yaml -q >/dev/null 2>&1 || fail "third run"
[ "$(ran)" -eq 12 ] || fail "a run without --use-cache should run all: $(ran)"
[ "$(rows)" -eq 6 ] || fail "entries should be replaced, not added: $(rows)"
# a new value: --cache-only runs nothing, skips it, exits 0
study "1, 2, 3, 4" >c4.yaml
"$PD" bench c4.yaml -q --cache-only >o4 2>e4 || { cat e4; fail "--cache-only exit"; }
[ "$(ran)" -eq 12 ] || fail "--cache-only ran scripts"
grep -q 'cache: 6 of 8 repetitions taken from .*, 2 skipped (not in the cache, --cache-only)' o4 || fail "cache-only: $(cat o4)"
[ "$(wc -l <wd/run_004/results.csv)" -eq 7 ] || fail "cache-only results: $(cat wd/run_004/results.csv)"
# --use-cache runs only the missing ones; the dry run says how many are cached
"$PD" bench c4.yaml --dry-run --use-cache >d4 2>&1 || fail "dry run with the cache"
grep -q '^cache: 6 of 8 repetitions taken from' d4 || fail "dry run: $(cat d4)"
"$PD" bench c4.yaml -q --use-cache >/dev/null 2>&1 || fail "--use-cache with a new value"
[ "$(ran)" -eq 14 ] || fail "--use-cache with a new value ran $(($(ran) - 12)), want 2"
# the key: a variable the key keeps (not excluded) misses
sed 's/cache_exclude_vars: \[out\]/cache_exclude_vars: []/' c.yaml >noex.yaml
"$PD" bench noex.yaml -q --use-cache >/dev/null 2>&1 || fail "no exclusion run"
[ "$(ran)" -eq 20 ] || fail "out in the key: every repetition should miss, ran $(($(ran) - 14))"
# an entry IOPS wrote (its param_hash: python3 -c 'import json, hashlib;
# print(hashlib.md5(json.dumps({"x": 5}, sort_keys=True).encode()).hexdigest())')
# is taken; one without every metric of the script is a miss (IOPS re-runs it)
sqlite3 cache/c.db "INSERT INTO cached_executions (param_hash, params_json, repetition, metrics_json, metadata_json, created_at) VALUES
  ('7e1046a94a75679fe7ac259e068afdb5', '{\"x\": 5}', 1, '{\"v\": 4242}', '{}', '2026-01-01T00:00:00'),
  ('7e1046a94a75679fe7ac259e068afdb5', '{\"x\": 5}', 2, '{\"v\": 4343}', '{}', '2026-01-01T00:00:00'),
  ('465012b441544c087ea7d92bb6fecb0e', '{\"x\": 6}', 1, '{}', '{}', '2026-01-01T00:00:00')"
study "5, 6" | sed 's/cache_exclude_vars: \[out\]/cache_exclude_vars: [out]\n  repetitions: 1/; s/  repetitions: 2//' >iops.yaml
before=$(ran)
"$PD" bench --results-layout short iops.yaml -q --use-cache >oi 2>ei || { cat ei; fail "IOPS-written entries"; }
[ "$(ran)" -eq $((before + 1)) ] || fail "IOPS-written entries: ran $(($(ran) - before)), want 1 (x=6 lacks v)"
grep -q '^exec_0001,1,5,.*,4242$' wd/run_*/results.csv || fail "IOPS-written metric not taken: $(cat oi)"

# --use-cache without cache_file
sed '/cache_file/d' c.yaml >nocache.yaml
rc=0; "$PD" bench nocache.yaml --use-cache >/dev/null 2>e5 || rc=$?
[ $rc -eq 2 ] && grep -q 'needs benchmark.cache_file' e5 || fail "--use-cache without cache_file: rc $rc $(cat e5)"
# two harnesses storing into one cache at once: no lock error, every row kept
study "$(seq -s, 101 140)" | sed 's|./wd|./wda|' >a.yaml
study "$(seq -s, 201 240)" | sed 's|./wd|./wdb|' >b.yaml
"$PD" bench a.yaml -q --parallel 4 >/dev/null 2>ea & pa=$!
"$PD" bench b.yaml -q --parallel 4 >/dev/null 2>eb & pb=$!
wait $pa || { cat ea; fail "concurrent run a"; }
wait $pb || { cat eb; fail "concurrent run b"; }
! grep -qi 'database\|sqlite\|not stored in the cache\|cache lookup' ea eb || fail "concurrent writers: $(cat ea eb)"
# 8 + 6 + 3: the 8 keys so far, 6 more where out is in the key, the 3 IOPS rows
[ "$(rows)" -eq $((8 + 6 + 3 + 2 * 40 + 2 * 40)) ] || fail "concurrent writers: $(rows) rows, want 177"

# ---- 2. the budget: 3 executions of 2x cores, 0.3 s each
cat >b.yaml <<EOF
benchmark:
  name: b
  workdir: ./wdbud
  max_core_hours: 0.0001
  cores_expr: "{{ x * 2 }}"
  random_seed: 1   # IOPS's run order (docs/bench.md "Run order"): 1, 2, 3
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "sleep 0.3; echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
EOF
# 2 cores x 0.3 s = 0.00017 core-hours >= 0.0001 after the first: the rest never start
rc=0; "$PD" bench b.yaml >bo 2>be || rc=$?
[ $rc -eq 1 ] || fail "budget run: exit $rc, want 1"
grep -q 'budget reached: 0.000[0-9]* of 0.0001 core-hours used' be || fail "budget message: $(cat be)"
grep -q '1/3 repetitions succeeded' bo || fail "budget: $(cat bo)"
grep -q 'budget reached: 2 repetitions left unstarted; --resume runs them' bo || fail "budget summary: $(cat bo)"
[ ! -e wdbud/run_001/exec_0002/repetition_001/stdout ] || fail "exec_0002 started past the budget"
grep -q '"max_core_hours": 0.0001' wdbud/run_001/__iops_run_metadata.json || fail "run metadata: max_core_hours"
"$PD" bench b.yaml -q --max-core-hours 1 >/dev/null 2>&1 || fail "--max-core-hours 1 should let all run"
# the estimate: 2 + 4 + 6 = 12 cores; an hour each is 12 core-hours
"$PD" bench b.yaml --dry-run --time-estimate 3600,60 >est 2>&1 || fail "time estimate"
grep -q '3600 s per repetition: 12.0000 core-hours, 3.00 hours sequential; exceeds the budget of 0.0001 core-hours' est ||
    fail "estimate: $(cat est)"
grep -q '60 s per repetition: 0.2000 core-hours' est || fail "estimate 60: $(cat est)"
sed 's/max_core_hours: 0.0001/estimated_time_seconds: 1800/' b.yaml >e.yaml
"$PD" bench e.yaml --dry-run >est2 2>&1 && grep -q '1800 s per repetition: 6.0000 core-hours' est2 ||
    fail "estimated_time_seconds: $(cat est2)"
sed 's/{{ x \* 2 }}/{{ y * 2 }}/' b.yaml >bad.yaml
rc=0; "$PD" bench bad.yaml --dry-run >/dev/null 2>bade || rc=$?
[ $rc -eq 2 ] && grep -q "bad.yaml:5: benchmark.cores_expr: .*'y'" bade || fail "unknown name in cores_expr: rc $rc $(cat bade)"

# ---- 3. machines
cat >m.yaml <<EOF
benchmark: {name: m, workdir: ./wdm, repetitions: 1}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
machines:
  big:
    benchmark: {repetitions: 3}
    vars:
      x: {sweep: {mode: list, values: [7, 8, 9]}}
EOF
"$PD" bench m.yaml --dry-run | head -1 | grep -q '2 executions x 1 repetitions' || fail "base study"
"$PD" bench m.yaml --dry-run --machine big | head -1 | grep -q '3 executions x 3 repetitions' || fail "--machine big"
IOPS_MACHINE=big "$PD" bench m.yaml --dry-run | head -1 | grep -q '3 executions x 3' || fail "IOPS_MACHINE=big"
IOPS_MACHINE=nope "$PD" bench m.yaml --dry-run --machine big >/dev/null || fail "--machine should win over IOPS_MACHINE"
rc=0; "$PD" bench m.yaml --dry-run --machine nope >/dev/null 2>me || rc=$?
[ $rc -eq 2 ] && grep -q "m.yaml:11: machines: unknown machine 'nope' (the study has: big)" me || fail "unknown machine: $(cat me)"
"$PD" bench m.yaml --machine big --resolve >resolved.yaml || fail "--resolve"
grep -q 'values: \[7, 8, 9\]' resolved.yaml && ! grep -q '^machines' resolved.yaml || fail "resolved: $(cat resolved.yaml)"
[ ! -e wdm ] || fail "--resolve created the workdir"
[ "$("$PD" bench resolved.yaml --dry-run | tail -n +3)" = "$("$PD" bench m.yaml --machine big --dry-run | tail -n +3)" ] ||
    fail "the resolved study does not plan the same executions"

# ---- 4. output.sink.type sqlite
cat >s.yaml <<EOF
# random_seed 8: IOPS's run order is exec 1's two repetitions, then 2's, then 3's
benchmark: {name: sq, workdir: ./wds, repetitions: 2, random_seed: 8}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
  tag: {type: str, sweep: {mode: list, values: ["a'b"]}}
command: {template: "echo v={{ x }}.5"}
scripts:
  - name: s
    script_template: |
      #!/bin/bash
      if [ {{ x }} -eq 2 ] && [ -e $T/slow.flag ]; then sleep 30; fi
      {{ command.template }} > {{ execution_dir }}/m.txt
    parser: {file: m.txt, metrics: [{name: v}]}
output:
  sink: {type: sqlite, path: $T/out/r.db, table: runs}
EOF
q() { sqlite3 out/r.db "$1"; }
touch slow.flag
"$PD" bench s.yaml -q >/dev/null 2>int.log & pid=$!
i=0
until grep -qs '"status": "RUNNING"' wds/run_001/exec_0002/repetition_001/__iops_status.json; do
    i=$((i + 1)); [ $i -lt 200 ] || fail "sqlite: exec_0002 never started"; sleep 0.05
done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ $rc -eq 130 ] || fail "sqlite: interrupted run exit $rc"
[ "$(q 'SELECT count(*) FROM runs')" -eq 2 ] || fail "sqlite: rows after the interrupt: $(q 'SELECT * FROM runs')"
rm slow.flag
"$PD" bench s.yaml --resume -q >/dev/null 2>&1 || fail "sqlite: resume"
[ "$(q 'SELECT count(*) FROM runs')" -eq 6 ] || fail "sqlite: rows after resume: $(q 'SELECT count(*) FROM runs')"
[ "$(q 'SELECT "execution.execution_id", "execution.repetition", "vars.x", "vars.tag", "metadata.executor_status", "metrics.v", typeof("metrics.v") FROM runs ORDER BY 1, 2 LIMIT 1')" = "1|1|1|a'b|SUCCEEDED|1.5|real" ] ||
    fail "sqlite row: $(q 'SELECT * FROM runs LIMIT 1')"
want='benchmark.name benchmark.description execution.execution_id execution.repetition execution.repetitions execution.workdir execution.execution_dir vars.x vars.tag metadata.executor_status metadata.returncode metrics.v'
[ "$(q "SELECT name FROM pragma_table_info('runs')" | tr '\n' ' ')" = "$want " ] || fail "sqlite columns: $(q "SELECT name FROM pragma_table_info('runs')")"
"$PD" bench s.yaml -q >/dev/null 2>&1 || fail "sqlite: second run"
[ "$(q 'SELECT count(*) FROM runs')" -eq 12 ] || fail "sqlite: a second run appends: $(q 'SELECT count(*) FROM runs')"
echo "bench_cache_budget: ok"
