#!/bin/sh
# CLI tests of `paddiser plan` and `paddiser model` (planner half of issue #4):
# hand-checked plan, page selection in JSON, tiny model train/eval, stencil and random-access
# calibration, and clear errors on bad input.
set -eu
P=${BUILD:-build}/paddiser
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "planner_cli: $*" >&2; exit 1; }

# Two linear tasks, 25 bytes per 0.25 of share (docs/planner.md example):
# greedy 0.75/0.25 -> makespan 5; exact 0.665/0.33 -> 4.68.
cat > "$T/p.json" <<'J'
{"capacity": 100, "step": 0.25,
 "tasks": [{"name": "a", "time": [[0, 10], [1, 2]], "bytes": [[0, 0], [1, 100]]},
           {"name": "b", "time": [[0, 6], [1, 2]], "bytes": [[0, 0], [1, 100]]}]}
J
"$P" plan "$T/p.json" > "$T/out.txt"
grep -q '^greedy: makespan 5 s, fast memory 100 / 100 bytes' "$T/out.txt" || fail "greedy line: $(cat "$T/out.txt")"
grep -q '^exact: makespan 4.68 s' "$T/out.txt" || fail "exact line: $(cat "$T/out.txt")"
grep -Eq '^  a +0\.7500 +75 +4$' "$T/out.txt" || fail "greedy task a"
"$P" plan "$T/p.json" --planner greedy | grep -q '^exact' && fail "--planner greedy printed exact"

# Pages: the hottest pages of each task within its bytes.
cat > "$T/q.json" <<'J'
{"capacity_pages": 2, "page_size": 4096,
 "tasks": [{"name": "hot", "t_dram": 1, "t_slow": 4, "pages": [5, 0, 1, 5, 3]},
           {"name": "idle", "t_dram": 1, "t_slow": 1, "pages": [0, 0]}]}
J
"$P" plan "$T/q.json" --json --planner exact > "$T/q.out"
tr -d ' \n' < "$T/q.out" | grep -q '"pages":\[0,3\]' || fail "selected pages: $(cat "$T/q.out")"
tr -d ' \n' < "$T/q.out" | grep -q '"used":8192' || fail "used bytes"

# Bad problems: exit 2 and a message naming the problem.
echo '{"capacity": 1, "tasks": [{"name": "x", "time": [[0, 1], [0, 2]], "bytes": [[0, 0]]}]}' > "$T/bad.json"
if "$P" plan "$T/bad.json" 2> "$T/err"; then fail "bad time curve accepted"; fi
grep -q 'task x: time\[1\]' "$T/err" || fail "error message: $(cat "$T/err")"
echo '{"tasks": []}' > "$T/bad2.json"
if "$P" plan "$T/bad2.json" 2> "$T/err"; then fail "empty tasks accepted"; fi
grep -q 'non-empty "tasks"' "$T/err" || fail "error message: $(cat "$T/err")"
if "$P" plan "$T/missing.json" 2> "$T/err"; then fail "missing file accepted"; fi
echo '{"capacity_pages": 1e19, "tasks": [{"time": [[0, 1]], "bytes": [[0, 0]]}]}' > "$T/bad3.json"
if "$P" plan "$T/bad3.json" 2> "$T/err"; then fail "capacity_pages past 2^64 bytes accepted"; fi
grep -q 'exceeds 2^64 bytes' "$T/err" || fail "error message: $(cat "$T/err")"
echo '{"capacity": 1, "page_size": 1e30, "tasks": [{"time": [[0, 1]], "bytes": [[0, 0]]}]}' > "$T/bad4.json"
if "$P" plan "$T/bad4.json" 2> "$T/err"; then fail "page_size 1e30 accepted"; fi
grep -q '"page_size" must be an integer in 1..1073741824' "$T/err" || fail "error message: $(cat "$T/err")"

# Model: tiny synthetic set, few trees, held-out report, eval round trip.
"$P" model gen-synthetic -o "$T/syn.csv" --regions 20 --placements 5 --seed 2 > /dev/null
[ "$(wc -l < "$T/syn.csv")" -eq 101 ] || fail "synthetic rows"
"$P" model train "$T/syn.csv" -o "$T/m.json" --rounds 10 --depth 3 --holdout 0.25 > "$T/train.txt"
grep -q '^held-out  rows     25' "$T/train.txt" || fail "held-out report: $(cat "$T/train.txt")"
"$P" model eval "$T/m.json" "$T/syn.csv" | grep -q '^all       rows    100' || fail "eval"
# --json: the same numbers as one object (issue #17)
"$P" model train "$T/syn.csv" -o "$T/mj.json" --rounds 10 --depth 3 --holdout 0.25 --json > "$T/train.json"
grep -q '"rows_train":75,"rows_held_out":25,' "$T/train.json" || fail "train --json: $(cat "$T/train.json")"
grep -q '"held_out":{"rows":25,"mape_t_hybrid_pct":' "$T/train.json" || fail "train --json held-out: $(cat "$T/train.json")"
cmp -s "$T/m.json" "$T/mj.json" || fail "--json changed the model"
"$P" model eval "$T/m.json" "$T/syn.csv" --json > "$T/eval.json"
grep -q '"all":{"rows":100,"mape_t_hybrid_pct":' "$T/eval.json" || fail "eval --json: $(cat "$T/eval.json")"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$T/train.json" "$T/eval.json" ||
        fail "model --json output is not JSON"
fi
# split writes train's held-out regions: training on its train part gives the same model
"$P" model split "$T/syn.csv" --train "$T/tr.csv" --test "$T/te.csv" --holdout 0.25 > /dev/null
[ "$(wc -l < "$T/te.csv")" -eq 26 ] && [ "$(wc -l < "$T/tr.csv")" -eq 76 ] || fail "split rows"
"$P" model train "$T/tr.csv" -o "$T/m2.json" --rounds 10 --depth 3 --holdout 0 > /dev/null
cmp -s "$T/m.json" "$T/m2.json" || fail "model trained on the split's train part differs"
if "$P" model split "$T/syn.csv" --train "$T/tr.csv" 2> "$T/err"; then fail "split without --test accepted"; fi
if "$P" model train "$T/syn.csv" 2> "$T/err"; then fail "train without -o accepted"; fi
if "$P" model train "$T/syn.csv" -o "$T/x.json" --holdout 2 2> "$T/err"; then fail "bad holdout accepted"; fi
grep -q -- '--holdout' "$T/err" || fail "holdout message"
if "$P" model eval "$T/syn.csv" "$T/syn.csv" 2> "$T/err"; then fail "csv as model accepted"; fi
grep -q 'not an xgboost model' "$T/err" || fail "model error: $(cat "$T/err")"

# Stencil calibration on a small explicit cache.
"$P" model calibrate-stencil -o "$T/st.csv" --llc-kib 64 --ways 4 --row-kib 4 --scale 1 > /dev/null
[ "$(wc -l < "$T/st.csv")" -eq 8 ] || fail "stencil table rows"
if "$P" model calibrate-stencil -o "$T/st3.csv" --method magic 2> "$T/err"; then fail "bad method accepted"; fi

# Random-access calibration, small: a 256 KiB "LLC", arrays up to 2 MiB
# (1/16 to 8 times it: 15 sizes), one short run each. The table it writes
# is the one the runtime reads (it checks that itself before writing).
"$P" model calibrate-random -o "$T/rc.csv" --llc-kib 256 --max-mib 2 --accesses 16 --reps 1 > "$T/out" ||
    fail "calibrate-random: $(cat "$T/out")"
[ "$(head -1 "$T/rc.csv")" = "bytes_over_llc,cost,ns_per_gather,method" ] || fail "random table header"
[ "$(wc -l < "$T/rc.csv")" -eq 16 ] || fail "random table rows: $(wc -l < "$T/rc.csv")"
[ "$(tail -1 "$T/rc.csv" | cut -d, -f1,2)" = "8,1" ] || fail "random table: the largest size is the unit"
PADDISER_RANDOM_TABLE="$T/rc.csv" "$P" model calibrate-random -o "$T/rc2.csv" --llc-kib 256 --max-mib 1 \
    --accesses 16 --reps 1 > /dev/null || fail "calibrate-random with a table set"
if "$P" model calibrate-random -o "$T/rc3.csv" --llc-kib 65536 --max-mib 1 2> "$T/err"; then
    fail "calibrate-random with fewer than two sizes accepted"
fi
grep -q 'leaves fewer than two sizes' "$T/err" || fail "calibrate-random message: $(cat "$T/err")"
[ ! -e "$T/rc3.csv" ] || fail "calibrate-random wrote a table it refused"
exit 0
