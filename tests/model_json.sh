#!/bin/sh
# `paddiser model train --json` and `paddiser model eval --json` (issue #17):
# one JSON document on stdout whose fields match the text output (row
# counts, options, every accuracy to the digits the text prints), and the
# same model file either way.
set -eu
# the checks parse the JSON with python3 (the fresh root's minimal system has none)
command -v python3 >/dev/null 2>&1 || { echo "model_json: SKIP (no python3)"; exit 0; }
P=${BUILD:-build}/paddiser
T=$(mktemp -d /tmp/pd-model-json.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$P" model gen-synthetic -o "$T/syn.csv" --regions 20 --placements 5 --seed 3 >/dev/null
train() { "$P" model train "$T/syn.csv" --rounds 12 --depth 3 --holdout 0.3 --seed 4 --eta 0.2 "$@"; }
train -o "$T/m.json" >"$T/train.txt"
train -o "$T/mj.json" --json >"$T/train.json"
cmp -s "$T/m.json" "$T/mj.json" || fail "--json changed the model"
"$P" model eval "$T/m.json" "$T/syn.csv" >"$T/eval.txt"
"$P" model eval "$T/m.json" "$T/syn.csv" --json >"$T/eval.json"
"$P" model eval default "$T/syn.csv" >"$T/evald.txt"
"$P" model eval default "$T/syn.csv" --json >"$T/evald.json"
for f in train eval evald; do
    python3 -m json.tool "$T/$f.json" >/dev/null || fail "$f --json is not one JSON document: $(cat "$T/$f.json")"
done

python3 - "$T" <<'PY' || fail "model --json and text differ"
import json, re, sys, os
T = sys.argv[1]
METRIC = re.compile(r"(\S+) +rows +(\d+)   MAPE\(t_hybrid\) +(\S+)%   R\^2\(f\) +(\S+)   \| f = 1 baseline: MAPE +(\S+)%  R\^2 +(\S+)$")
def metrics(lines):
    out = {}
    for l in lines:
        m = METRIC.match(l)
        if m:
            out[m.group(1)] = m.groups()[1:]
    return out
def same(label, j, t):
    rows, mape, r2, bmape, br2 = t
    assert j["rows"] == int(rows), (label, j, t)
    for key, txt, fmt in (("mape_t_hybrid_pct", mape, "%.2f"), ("r2_f", r2, "%.4f"),
                          ("baseline_mape_t_hybrid_pct", bmape, "%.2f"), ("baseline_r2_f", br2, "%.4f")):
        assert (fmt % j[key]).strip() == txt, (label, key, j[key], txt)

text = open(os.path.join(T, "train.txt")).read().splitlines()
d = json.load(open(os.path.join(T, "train.json")))
assert set(d) == {"data", "model", "rows_train", "rows_held_out", "holdout", "seed", "rounds", "depth", "eta",
                  "train", "held_out"}, d.keys()
m = re.match(r"trained on (\S+): (\d+) rows \((\d+) held out by region, fraction (\S+), seed (\d+)\), (\d+) rounds, depth (\d+), eta (\S+)$", text[0])
assert m, text[0]
assert d["data"] == m.group(1) == os.path.join(T, "syn.csv")
assert d["model"] == os.path.join(T, "mj.json")
assert (d["rows_train"], d["rows_held_out"]) == (int(m.group(2)), int(m.group(3)))
assert d["rows_train"] + d["rows_held_out"] == 100 and d["rows_held_out"] > 0
assert "%.2f" % d["holdout"] == m.group(4) == "0.30"
assert (d["seed"], d["rounds"], d["depth"]) == (int(m.group(5)), int(m.group(6)), int(m.group(7))) == (4, 12, 3)
assert d["eta"] == float(m.group(8)) == 0.2
tm = metrics(text)
same("train", d["train"], tm["train"])
same("held-out", d["held_out"], tm["held-out"])
assert d["train"]["rows"] == d["rows_train"] and d["held_out"]["rows"] == d["rows_held_out"]

for name, model in (("eval", os.path.join(T, "m.json")), ("evald", None)):
    text = open(os.path.join(T, name + ".txt")).read().splitlines()
    d = json.load(open(os.path.join(T, name + ".json")))
    assert set(d) == {"model", "data", "all"}, d.keys()
    assert text[0] == "model %s on %s" % (d["model"], d["data"]), (text[0], d)
    if model:
        assert d["model"] == model, d["model"]
    same(name, d["all"], metrics(text)["all"])
    assert d["all"]["rows"] == 100
PY

# --holdout 0: nothing held out, held_out is null
"$P" model train "$T/syn.csv" -o "$T/m0.json" --rounds 5 --holdout 0 --json >"$T/train0.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["held_out"] is None and d["rows_held_out"] == 0 and d["train"]["rows"] == 100, d' "$T/train0.json" ||
    fail "train --holdout 0 --json: $(cat "$T/train0.json")"

# a failed eval writes nothing on stdout in --json mode
printf 'not,a,model\n' >"$T/bad.json"
rc=0; "$P" model eval "$T/bad.json" "$T/syn.csv" --json >"$T/bad.out" 2>"$T/bad.err" || rc=$?
[ "$rc" -ne 0 ] && [ ! -s "$T/bad.out" ] || fail "failed eval --json: rc $rc, stdout $(cat "$T/bad.out")"
echo "model_json: ok"
