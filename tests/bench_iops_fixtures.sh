#!/bin/sh
# IOPS-shaped study files (tests/fixtures/bench/iops): every one passes a
# dry run; the ones whose commands are plain shell also run, and their
# scripts, inputs, post scripts, params and results.csv are checked.
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
PD=$(cd "$BUILD" && pwd)/paddiser
FX=$(cd "$TESTS_DIR/fixtures/bench/iops" && pwd)
T=$(mktemp -d /tmp/pd-bench-iops.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# 1. every fixture: a dry run succeeds and creates nothing
for f in "$FX"/*.yaml; do
    n=$(basename "$f" .yaml)
    "$PD" bench --dry-run --workdir "wd_$n" "$f" >"$n.dry" 2>"$n.err" || { cat "$n.err"; fail "$n: dry run failed"; }
    [ ! -e "wd_$n" ] || fail "$n: the dry run created its workdir"
    grep -q '^exec_[0-9]' "$n.dry" || fail "$n: no executions listed"
done
head -1 ior_local.dry | grep -q '12 executions x 3 repetitions' || fail "ior_local: $(head -1 ior_local.dry)"
grep -q 'stripe_dir=/lustre/bench/stripe_16 stripe_count=16 ntasks=16 block_mb=4096 out_dir=/lustre/bench/out_16' \
    ior_slurm.dry || fail "ior_slurm: split()/string concat: $(cat ior_slurm.dry)"
head -1 ior_slurm.dry | grep -q '9 executions x 1 repetitions = 9 runs (executor slurm' || fail "ior_slurm: $(head -1 ior_slurm.dry)"
head -1 mdtest.dry | grep -q '8 executions x 2 repetitions' || fail "mdtest: $(head -1 mdtest.dry)"
head -1 conditional.dry | grep -q '^compression: 10 executions' || fail "conditional: $(head -1 conditional.dry)"
grep -q 'codec=none level=0 long_mode=False chunk_kb=64 label=raw' conditional.dry || fail "conditional: default values"
grep -q "constraint 'scratch'" conditional.err && fail "conditional: os_env.get() constraint should hold"
head -1 random_search.dry | grep -q '5 executions' || fail "random_search: $(head -1 random_search.dry)"
"$PD" bench --dry-run --workdir wd_random_search "$FX/random_search.yaml" >random2.dry 2>/dev/null
cmp -s random_search.dry random2.dry || fail "random_search: the seeded sample changed between runs"
grep -q 'exec_0002 \[reader\]: size_mb=1' multi_script.dry || fail "multi_script: $(cat multi_script.dry)"
grep -q 'benchmark.probes.versions: not supported by paddiser bench; ignored' gpu_probes.err ||
    fail "gpu_probes: versions should be accepted with a warning"

# 2. runs: templating ({% for %}, command.env, list variables, filters)
"$PD" bench --results-layout short -q --workdir wd_t "$FX/templating.yaml" >t.out 2>t.err || { cat t.err; fail "templating run"; }
R=wd_t/run_001
S=$R/exec_0002/repetition_002
cat >want.sh <<WANT
#!/bin/bash
# module load gcc; module load openmpi; 
export OMP_NUM_THREADS="3"
export SIM_TAG="TEMPLATING"
mkdir -p $T/$S/sim
# vars: config_index,grid_sizes,steps,grid,out_path,modules
echo sim --grid 400 --steps 4000  --in0 part0.dat --in1 part1.dat --out out_2.txt > $T/$S/sim/out_2.txt
echo "cells=160000" >> $T/$S/sim/out_2.txt
echo "threads=\$OMP_NUM_THREADS tag=\$SIM_TAG kind=demo" >> $T/$S/sim/out_2.txt
WANT
cmp -s want.sh "$S/run_sim.sh" || { diff want.sh "$S/run_sim.sh" >&2 || true; fail "templating: run_sim.sh"; }
grep -q '^threads=3 tag=TEMPLATING kind=demo$' "$S/sim/out_2.txt" || fail "templating: command.env not exported"
[ "$(cat $R/exec_0002/__iops_params.json)" = "{\"config_index\": 2, \"grid_sizes\": [100, 200, 400], \"steps\": [1000, 2000, 4000], \"grid\": 400, \"out_path\": \"$T/$R/exec_0002/repetition_001/sim/out_2.txt\", \"modules\": \"module load gcc; module load openmpi; \"}" ] ||
    fail "templating: params $(cat $R/exec_0002/__iops_params.json)"
# rows come in run order (IOPS's shuffle): compare them sorted, header first
[ "$(sed 's/^\([^,]*,[^,]*\),.*,/\1,/' $R/results.csv | { IFS= read -r h; echo "$h"; LC_ALL=C sort; } | tr '\n' ' ')" = "execution_id,repetition,cells exec_0001,1,10000 exec_0001,2,10000 exec_0002,1,160000 exec_0002,2,160000 " ] ||
    fail "templating: results $(cat $R/results.csv)"

# conditional variables
"$PD" bench --results-layout short -q --workdir wd_c "$FX/conditional.yaml" >c.out 2>c.err || { cat c.err; fail "conditional run"; }
[ "$(wc -l <wd_c/run_001/results.csv)" -eq 11 ] || fail "conditional: $(cat wd_c/run_001/results.csv)"
# IOPS 3.5.8 numbers this combination 6 (tests/fixtures/bench/iops_order/conditional)
grep -q '^exec_0006,1,zstd,9,True,64,zstd-9-long,20$' wd_c/run_001/results.csv || fail "conditional: $(cat wd_c/run_001/results.csv)"

# two scripts: one execution each per combination, metrics side by side, post script
"$PD" bench --results-layout short -q --workdir wd_m "$FX/multi_script.yaml" >m.out 2>m.err || { cat m.err; fail "multi_script run"; }
R=wd_m/run_001
[ "$(head -1 $R/results.csv)" = "execution_id,repetition,size_mb,file,write_mb,read_mb" ] || fail "multi: header"
grep -q "^exec_0003,1,4,$T/$R/exec_0003/repetition_001/data.bin,4,\$" $R/results.csv || fail "multi: $(cat $R/results.csv)"
grep -q "^exec_0004,1,4,$T/$R/exec_0004/repetition_001/data.bin,,8\$" $R/results.csv || fail "multi: $(cat $R/results.csv)"
[ -f $R/exec_0001/repetition_001/run_writer.sh ] && [ ! -e $R/exec_0001/repetition_001/run_reader.sh ] || fail "multi: scripts"
[ "$(cat $R/exec_0004/repetition_001/post_ran.txt)" = "post of 4" ] || fail "multi: reader's post script did not run"
[ ! -e $R/exec_0003/repetition_001/post_writer.sh ] || fail "multi: the writer has no post script"
[ "$(stat -c %s $R/exec_0003/repetition_001/data.bin)" -eq 4194304 ] || fail "multi: dd did not run"
if command -v python3 >/dev/null 2>&1; then
    [ -f $R/__iops_parser_reader.py ] && [ ! -e $R/__iops_parser.py ] || fail "multi: parser script files"
    [ ! -s $R/exec_0004/repetition_001/__iops_parser.log ] || fail "multi: parser: $(cat $R/exec_0004/repetition_001/__iops_parser.log)"
fi

# inputs
"$PD" bench --results-layout short -q --workdir wd_i "$FX/inputs.yaml" >i.out 2>i.err || { cat i.err; fail "inputs run"; }
S=wd_i/run_001/exec_0002/repetition_001
[ "$(cat $S/hosts)" = "$(printf 'node0\nnode1')" ] || fail "inputs: hosts $(cat $S/hosts)"
[ "$(stat -c %a $S/hosts)" = 600 ] || fail "inputs: mode of hosts"
grep -q "^worker1 = $T/$S/w1\$" $S/conf/app.conf || fail "inputs: app.conf $(cat $S/conf/app.conf)"
grep -q '^exec_0002,1,2,2$' wd_i/run_001/results.csv || fail "inputs: $(cat wd_i/run_001/results.csv)"

# 3. a failing post script fails its repetition
cat >post_fail.yaml <<'YAML'
benchmark: {name: pf, workdir: ./wd_pf}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: s
    script_template: "{{ command.template }} > out.txt"
    post: {script: "echo checking >&2; [ {{ x }} -ne 2 ]"}
    parser: {file: out.txt, metrics: [v]}
YAML
rc=0; "$PD" bench -q post_fail.yaml >pf.out 2>pf.err || rc=$?
[ "$rc" -eq 1 ] || fail "post failure: exit $rc"
grep -q '"status": "FAILED"' wd_pf/run_001/exec_0002/repetition_001/__iops_status.json || fail "post failure: status"
grep -q '"status": "SUCCEEDED"' wd_pf/run_001/exec_0001/repetition_001/__iops_status.json || fail "post ok: status"
grep -q '^checking$' wd_pf/run_001/exec_0002/repetition_001/post_stderr || fail "post failure: post_stderr"
grep -q 'post_s.sh failed (exit 1' pf.err || fail "post failure: message $(cat pf.err)"
echo "bench_iops_fixtures: ok"
