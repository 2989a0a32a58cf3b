#!/bin/sh
# paddiser bench against runs IOPS 3.5.8 made of the same studies
# (tests/fixtures/bench/iops_order, README there), issue #15 items 5 to 7:
# the same executions under the same numbers (conditional variables, random
# search), the same run order (IOPS's seeded shuffle), and the summary's
# per-repetition derived values and column order. Needs python3 (for the
# comparisons); skipped without it.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
FX=$(cd "${TESTS_DIR:-$(dirname "$0")}/fixtures/bench/iops_order" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "bench_iops_order: SKIP (no python3)"; exit 0; }
T=$(mktemp -d /tmp/pd-bench-iops-order.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$T"

# Same execution numbers with the same variables, in both directions, with
# the same JSON types: a bool variable is JSON true/false in
# __iops_params.json and in the index's params, as IOPS writes it (a Python
# bool is not equal to "True", and type() tells 1 from True), and the
# variables in IOPS's order (for conditional.yaml its expansion order: codec,
# chunk_kb, level, long_mode, then the derived label), there and in
# results.csv's vars.* columns (IOPS's flattened layout, the default).
cat >params.py <<'PY'
import glob, json, os, sys
def typed(d):  # the order too: IOPS's expansion order with conditional variables
    return [(k, type(v).__name__, v) for k, v in d.items()]
def load(root):
    out = {}
    for f in glob.glob(os.path.join(root, "**", "exec_*", "__iops_params.json"), recursive=True):
        out[os.path.basename(os.path.dirname(f))] = typed(json.load(open(f)))
    return out
def index(root):
    d = json.load(open(os.path.join(root, "__iops_index.json")))
    return {e: typed(x["params"]) for e, x in d["executions"].items()}
iops, pd = load(sys.argv[1]), load(sys.argv[2])
bad = [e for e in sorted(set(iops) | set(pd)) if iops.get(e) != pd.get(e)]
for e in bad:
    print("%s: IOPS %s, paddiser %s" % (e, iops.get(e), pd.get(e)))
iops, pd = index(sys.argv[1]), index(sys.argv[2])
ibad = [e for e in sorted(set(iops) | set(pd)) if iops.get(e) != pd.get(e)]
for e in ibad:
    print("index %s: IOPS %s, paddiser %s" % (e, iops.get(e), pd.get(e)))
# IOPS's flattened results: the vars.* columns in the same order
def vars_columns(path):
    return [c for c in open(path).readline().strip().split(",") if c.startswith("vars.")]
cols = vars_columns(os.path.join(sys.argv[1], "results.csv")), vars_columns(os.path.join(sys.argv[2], "results.csv"))
if cols[0] != cols[1]:
    print("results.csv: IOPS %s, paddiser %s" % cols)
sys.exit(1 if bad or ibad or cols[0] != cols[1] else 0)
PY

# The studies' parser_script (IOPS needs one) is left out: paddiser's own
# NAME=VALUE parser reads the same files, without starting a Python per run.
for s in conditional random random_pool late_constraint summary; do
    sed '/parser_script: |/,/return {/d' "$FX/$s.yaml" >"$s.yaml"
    "$PD" bench -q --parallel 1 --workdir "$T/wd_$s" "$s.yaml" >"$s.out" 2>"$s.err" ||
        { cat "$s.err"; fail "$s: paddiser bench"; }
    R=wd_$s/run_001
    cmp -s "$FX/$s/run_001/order.txt" "$R/order.txt" ||
        fail "$s: run order: IOPS $(tr '\n' ' ' <"$FX/$s/run_001/order.txt"), paddiser $(tr '\n' ' ' <"$R/order.txt")"
    python3 params.py "$FX/$s/run_001" "$R" >"$s.params" || fail "$s: executions differ: $(cat "$s.params")"
done

# The summary of paddiser's own run: IOPS's header, per-repetition values
# (IOPS's csv module ends lines with CRLF).
S=wd_summary/run_001/__iops_resource_summary.csv
tr -d '\r' <"$FX/summary/run_001/__iops_resource_summary.csv" >iops_summary.csv
[ "$(head -1 "$S")" = "$(head -1 iops_summary.csv)" ] || fail "summary header: $(head -1 "$S")"
[ "$(cut -d, -f1-4 "$S")" = "$(cut -d, -f1-4 iops_summary.csv)" ] ||
    fail "summary variables: $(cut -d, -f1-4 "$S" | tr '\n' ' ')"

# --summarize of IOPS's run directory: the same header and values as IOPS's
# summary (numbers compared as numbers: paddiser writes the spec's fixed
# decimals, 48.70 where IOPS writes 48.7), except the row IOPS wrote before
# the last repetition's trace was complete (README).
cp -r "$FX/summary/run_001" iops_run
"$PD" bench --summarize iops_run >summ.out 2>summ.err || { cat summ.err; fail "--summarize of IOPS's run"; }
python3 - "$FX/summary/run_001/__iops_resource_summary.csv" iops_run/__iops_resource_summary.csv <<'PY' ||
import csv, sys
a, b = (list(csv.reader(open(p))) for p in sys.argv[1:3])
assert a[0] == b[0], (a[0], b[0])
assert [r[:4] for r in a] == [r[:4] for r in b], ([r[:4] for r in a], [r[:4] for r in b])
for ra, rb in zip(a[1:], b[1:]):
    if ra[:2] == ["exec_0001", "2"]:
        continue
    for name, x, y in zip(a[0], ra, rb):
        assert x == y or float(x) == float(y), (ra[:2], name, x, y)
PY
    fail "--summarize of IOPS's run differs from IOPS's summary"
echo "bench_iops_order: ok"
