#!/bin/sh
# paddiser sim CLI: presets, usage errors, one run with bench metrics and the
# run-dir tasks CSV, a quick study, training data, a profile file. Tiny inputs.
set -u
P="$BUILD/paddiser"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "sim_cli: $*" >&2; exit 1; }

"$P" sim tiers >"$T/tiers" || fail "tiers failed"
for k in optane cxl dram; do grep -q "^$k " "$T/tiers" || fail "tiers lacks $k"; done
# the migration throughput column: the cited 4 KiB move_pages rate on every preset
grep -q "migrate_GBs" "$T/tiers" || fail "tiers lacks the migration column"
[ "$(awk 'NR > 1 && $7 != "3.31"' "$T/tiers" | wc -l)" -eq 0 ] || fail "a preset's migration throughput is not 3.31 GB/s"
for bad in 0 -1 nan 1001 x; do
    "$P" sim study --quick --migrate-gbs "$bad" 2>"$T/err"
    [ $? -eq 2 ] || fail "sim study --migrate-gbs $bad should exit 2"
    grep -q -- "--migrate-gbs must be" "$T/err" || fail "no message for --migrate-gbs $bad"
done
"$P" sim run -w bfs --migrate-gbs 2 2>/dev/null; [ $? -eq 2 ] || fail "--migrate-gbs is a study and runtime option"

# sim runtime weighs the runtime's moves as the study does (the preset's
# throughput in the runtime's time, --migrate-gbs, or the user's
# PADDISER_MIGRATE_BW): moves that can never pay keep first touch, the same
# placement whatever this machine's speed, and free ones are made (one run
# per setting: the exact planner's makespan and its decision's first word)
rt_row() {
    "$P" sim runtime -w bfs -c 0.1 -r 1 --profile-dir "$T/rtp" "$@" 2>"$T/rt_err" | awk '$1 == "bfs" {print $4, $10}'
}
never_row=$(rt_row --migrate-gbs 0.000001)
never_user_row=$(PADDISER_MIGRATE_BW=1 rt_row)
free_row=$(rt_row --migrate-gbs 1000)
never=${never_row%% *} never_user=${never_user_row%% *} free_moves=${free_row%% *}
[ -n "$never" ] && [ -n "$free_moves" ] || fail "sim runtime printed no row: $(cat "$T/rt_err")"
[ "$never" = "$never_user" ] || fail "PADDISER_MIGRATE_BW=1 should keep first touch as --migrate-gbs 1e-6 does: $never_user vs $never"
awk -v a="$free_moves" -v b="$never" 'BEGIN { exit !(a < b) }' ||
    fail "free moves should beat first touch at 10% (bfs): $free_moves vs $never ms"
# ... and says so in its decision column
[ "${never_row#* }" = kept ] || fail "sim runtime: moves that cannot pay should read 'kept'"
case ${free_row#* } in
moved | hot-first) ;;
*) fail "sim runtime: free moves should read 'moved N' or 'hot-first N'" ;;
esac

"$P" sim run -w nope 2>"$T/err"; [ $? -eq 2 ] || fail "unknown workload should exit 2"
grep -q "unknown workload 'nope'" "$T/err" || fail "no message for unknown workload"
"$P" sim run -w bfs -c 2 2>"$T/err"; [ $? -eq 2 ] || fail "bad capacity should exit 2"
grep -q "capacity" "$T/err" || fail "no message for bad capacity"
"$P" sim run -w bfs -P lru 2>"$T/err"; [ $? -eq 2 ] || fail "bad policy should exit 2"
grep -q "unknown policy 'lru'" "$T/err" || fail "no message for bad policy"
"$P" sim frobnicate 2>"$T/err"; [ $? -eq 2 ] || fail "unknown subcommand should exit 2"
"$P" sim run -p /nonexistent/p.json 2>"$T/err"; [ $? -eq 1 ] || fail "missing profile should exit 1"
grep -q "/nonexistent/p.json" "$T/err" || fail "missing profile not named"
# every bad name or value is refused before any work (exit 2), naming it
refused() { # MESSAGE ARGS...
    msg=$1
    shift
    "$P" sim run -w bfs --profile-dir "$T/none" "$@" 2>"$T/err"
    [ $? -eq 2 ] || fail "sim run $* should exit 2"
    grep -qF -- "$msg" "$T/err" || fail "sim run $*: want '$msg', got '$(cat "$T/err")'"
}
refused "unknown tier preset 'pmem'" -t pmem
refused "unknown input 'huge'" -i huge
refused "bad --capacity 'nan'" -c nan
refused "bad --capacity '0.5,nan'" -c 0.5,nan
refused "bad --capacity '-0.1'" -c -0.1
refused "bad --capacity '1.01'" -c 1.01
refused "bad --capacity '0:1:1e-9'" -c 0:1:1e-9
refused "bad --capacity 'nan:1:0.1'" -c nan:1:0.1
refused "bad --capacity '0.9:0.1:0.1'" -c 0.9:0.1:0.1
refused "empty list" -w ,
refused "--reps must be" -r 0
refused "--step must be" --step 0.7
refused "--seed must be" --seed -1
[ ! -e "$T/none" ] || fail "a refused run created the profile directory"
"$P" sim study --quick -w bfs -t optane,pmem --profile-dir "$T/none" 2>"$T/err"
[ $? -eq 2 ] || fail "study with an unknown tier should exit 2"
grep -q "unknown tier preset 'pmem'" "$T/err" || fail "study: no message for the unknown tier"
"$P" sim study --quick -w bfs --repeats 0 --profile-dir "$T/none" 2>"$T/err"
[ $? -eq 2 ] || fail "study --repeats 0 should exit 2"
grep -q "\-\-repeats" "$T/err" || fail "study: no message for --repeats 0"
"$P" sim gen-training -w bfs -i tiny --profile-dir "$T/none" 2>"$T/err"
[ $? -eq 2 ] || fail "gen-training without --output should exit 2"
grep -q "needs --output" "$T/err" || fail "gen-training: no message for the missing output"
"$P" sim run -w bfs -c 0.2,0.4 2>"$T/err"; [ $? -eq 2 ] || fail "run with two capacities should exit 2"
grep -q "one --capacity" "$T/err" || fail "run: no message for two capacities"
"$P" sim study --quick -w bfs -i tiny --profile-dir "$T/prof" -o /nonexistent/dir/r.md 2>"$T/err"
[ $? -eq 1 ] || fail "study to an unwritable file should exit 1"
grep -q "cannot write /nonexistent/dir/r.md" "$T/err" || fail "study: unwritable output not named"
# progress: one line per profile step with elapsed time, then an ETA (issue #17)
PADDISER_QUIET=1 "$P" sim study --quick -w bfs,stencil -i tiny --profile-dir "$T/prof" -v -o "$T/p.md" \
    >/dev/null 2>"$T/err" || fail "study -v failed: $(cat "$T/err")"
grep -Eq '^sim study: \[1/2\] repeat 0, bfs/tiny \(elapsed [0-9.]+ s\)$' "$T/err" || fail "study -v: first step: $(cat "$T/err")"
grep -Eq '^sim study: \[2/2\] repeat 0, stencil/tiny \(elapsed [0-9.]+ s, ETA [0-9.]+ s\)$' "$T/err" ||
    fail "study -v: no ETA: $(cat "$T/err")"
grep -Eq '^sim study: 2/2 steps done in [0-9.]+ s$' "$T/err" || fail "study -v: no total: $(cat "$T/err")"
PADDISER_QUIET=1 "$P" sim study --quick -w bfs -i tiny --profile-dir "$T/prof" -o "$T/p.md" >/dev/null 2>"$T/err" ||
    fail "study failed"
[ ! -s "$T/err" ] || fail "study printed progress to a file without -v: $(cat "$T/err")"

"$P" sim run -w stencil -i tiny --profile-dir "$T/prof" -c 0.4 -P greedy \
    --metrics "$T/m.json" --tasks-csv "$T/t.csv" >"$T/out" || fail "run failed"
[ -s "$T/prof/stencil-tiny.json" ] || fail "profile not cached"
grep -q '"makespan_s"' "$T/m.json" || fail "metrics lack makespan_s"
grep -q '"gain_vs_hot_first"' "$T/m.json" || fail "metrics lack gain_vs_hot_first"
grep -q '"policy": "greedy"' "$T/m.json" || fail "metrics lack the policy"
[ "$(head -1 "$T/t.csv")" = "policy,task,time_s,dram_share,dram_bytes" ] || fail "tasks csv header"
[ "$(wc -l <"$T/t.csv")" -eq 49 ] || fail "tasks csv should have 6 policies x 8 tasks"
if [ -w /dev/full ]; then # a full disk is reported, naming the file
    "$P" sim run -w stencil -i tiny --profile-dir "$T/prof" --tasks-csv /dev/full >/dev/null 2>"$T/err"
    [ $? -eq 1 ] || fail "tasks csv on a full disk should exit 1"
    grep -q "cannot write /dev/full" "$T/err" || fail "tasks csv on a full disk: file not named"
fi
for pol in first-touch hot-first memory-mode greedy exact hot-exact; do
    grep -q "^$pol " "$T/out" || fail "run output lacks $pol"
done

"$P" sim study --quick -w stencil,dmrg -i tiny --repeats 2 --profile-dir "$T/prof" -o "$T/r.md" \
    --csv "$T/r.csv" >/dev/null || fail "study failed"
grep -q "### libpaddiser (runtime) vs each policy" "$T/r.md" || fail "study lacks the headline table"
grep -q "^| stencil |" "$T/r.md" || fail "study table lacks stencil"
grep -q "^| dmrg |" "$T/r.md" || fail "study table lacks dmrg"
grep -q "±" "$T/r.md" || fail "study: no confidence interval with 2 repeats"
head -1 "$T/r.csv" | grep -q "^workload,tier,capacity,input,policy,repeat,makespan_s,cov," ||
    fail "study csv header is not the contract's"
# 2 workloads x 3 capacities x 12 policies x 2 repeats, every policy named as the contract says
[ "$(wc -l <"$T/r.csv")" -eq 145 ] || fail "study csv should have 2 x 3 x 12 x 2 rows"
for pol in runtime greedy-oracle exact-oracle hot-first hot-exact tpp hemem memtis damon colloid memory-mode first-touch; do
    grep -q "^stencil,optane,0.20,tiny,$pol,1," "$T/r.csv" || fail "study csv lacks $pol"
done
[ -s "$T/prof/r1/stencil-tiny.json" ] || fail "repeat 1 not profiled afresh in its own directory"

"$P" sim gen-training -w dmrg -i tiny --profile-dir "$T/prof" -n 4 -o "$T/train.csv" >/dev/null ||
    fail "gen-training failed"
[ "$(head -1 "$T/train.csv")" = "region,placement,llc_mpki,ipc,prf_miss,mem_wcy,l2_ld_miss,br_msp,vec_ins,l3_ld_miss,r,t_dram,t_slow,t_hybrid" ] ||
    fail "training header"
[ "$(wc -l <"$T/train.csv")" -eq 33 ] || fail "training csv should have 8 tasks x 4 placements"

"$P" sim verify -i tiny >"$T/v" || fail "verify failed"
[ "$(grep -c ': ok$' "$T/v")" -eq 4 ] || fail "verify should pass four workloads"

PADDISER_QUIET=1 "$P" sim sampling -w stencil -i tiny >"$T/s" || fail "sampling failed"
grep -q "^stencil/tiny: .*sampled pages" "$T/s" || fail "sampling summary"
grep -q "^  grid_a " "$T/s" || fail "sampling per-object row"

"$P" sim profile -w bfs -i tiny -r 1 -o "$T/p.json" >/dev/null || fail "profile failed"
grep -q '"format": *"paddiser-sim-profile"' "$T/p.json" || fail "profile format field"
"$P" sim run -p "$T/p.json" -t cxl -c 0.3 >/dev/null || fail "run on a profile file failed"
grep -q '"version": *2' "$T/p.json" || fail "a 4 KiB profile should stay version 2"
# compressed (version 3) profiles: written at a coarser unit, loaded, run on
"$P" sim compress -p "$T/p.json" --unit 64K -o "$T/c.json" >"$T/out" || fail "compress failed"
grep -q "pages of 4096 B -> .* units of 65536 B" "$T/out" || fail "compress summary: $(cat "$T/out")"
grep -q '"version": *3' "$T/c.json" || fail "compressed profile should be version 3"
grep -q '"page_size": *65536' "$T/c.json" || fail "compressed profile's unit"
"$P" sim run -p "$T/c.json" -t cxl -c 0.3 >/dev/null || fail "run on a compressed profile failed"
"$P" sim profile -w stencil -i tiny -r 1 --unit 8K -o "$T/u.json" >/dev/null || fail "profile --unit failed"
grep -q '"page_size": *8192' "$T/u.json" || fail "profile --unit: unit not saved"
for bad in 3K 2K 0 2G x; do
    "$P" sim compress -p "$T/p.json" --unit "$bad" -o "$T/c.json" 2>"$T/err"
    [ $? -eq 2 ] || fail "compress --unit $bad should exit 2"
    grep -q -- "--unit must be" "$T/err" || fail "no message for --unit $bad"
done
"$P" sim compress -p "$T/c.json" --unit 4K -o "$T/d.json" 2>"$T/err"; [ $? -eq 1 ] || fail "a finer unit should fail"
grep -q "not a multiple" "$T/err" || fail "no message for a finer unit"
exit 0
