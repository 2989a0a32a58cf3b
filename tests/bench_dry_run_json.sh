#!/bin/sh
# paddiser bench --dry-run --json (issue #17): one JSON document on stdout
# with the same study, counts and executions as the text listing; the notes
# (cache, core-hours) go to stderr; --json without --dry-run is refused.
set -eu
# the checks parse the JSON with python3 (the fresh root's minimal system has none)
command -v python3 >/dev/null 2>&1 || { echo "bench_dry_run_json: SKIP (no python3)"; exit 0; }
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-dryjson.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/study.yaml" <<'YAML'
benchmark:
  name: tiny
  workdir: ./wd
  repetitions: 2
  parallel: 2
  max_core_hours: 1
vars:
  x:
    type: int
    sweep: {mode: list, values: [1, 2, 3]}
  mode:
    type: str
    sweep: {mode: list, values: [a, "b c"]}
  y:
    type: float
    expr: "x / 10"
constraints:
  - name: no-3b
    rule: "not (x == 3 and mode == 'b c')"
command:
  template: "echo {{ x }} {{ mode }}"
scripts:
  - name: tiny
    script_template: |
      #!/bin/bash
      {{ command.template }}
    parser:
      file: out.txt
      metrics:
        - name: score
YAML
cd "$T"

"$PD" bench study.yaml --dry-run >dry.txt
"$PD" bench study.yaml --dry-run --json >dry.json 2>dry.err
[ ! -e wd/run_001 ] || fail "the JSON dry run created a run directory"
python3 -m json.tool dry.json >/dev/null || fail "not one JSON document: $(cat dry.json)"
# the core-hours estimate is a note: on stderr, not in the document
grep -qi "core-hours" dry.err || fail "the budget note is not on stderr: $(cat dry.err)"

# every field against the text listing
python3 - dry.json dry.txt <<'PY' || fail "JSON and text listings differ"
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
m = re.match(r"(\S+): (\d+) executions x (\d+) repetitions = (\d+) runs \(executor (\S+), parallel (\d+)\)", text[0])
assert m, text[0]
assert d["study"] == m.group(1) == "tiny", d["study"]
assert d["executions"] == int(m.group(2)) == 5 == len(d["execs"]), d
assert d["repetitions"] == int(m.group(3)) == 2
assert d["runs"] == int(m.group(4)) == 10
assert d["executor"] == m.group(5) == "local"
assert d["parallel"] == int(m.group(6)) == 2
assert text[1] == "run directory: " + d["run_dir"], (text[1], d["run_dir"])
lines = [l for l in text if l.startswith("exec_")]
assert len(lines) == len(d["execs"])
for line, ex in zip(lines, d["execs"]):
    head, rest = line.split(":", 1)
    assert head == "exec_%04d" % ex["id"], (head, ex)
    assert ex["script"] is None
    assert list(ex["vars"]) == ["x", "mode", "y"], ex
    assert isinstance(ex["vars"]["x"], int) and isinstance(ex["vars"]["y"], float), ex
    m = re.fullmatch(r" x=(\d+) mode=(.*) y=(\S+)", rest)
    assert m, rest
    assert ex["vars"]["x"] == int(m.group(1)) and ex["vars"]["mode"] == m.group(2), (rest, ex)
    assert ex["vars"]["y"] == float(m.group(3)), (rest, ex)
assert d["execs"][3]["vars"] == {"x": 2, "mode": "b c", "y": 0.2}, d["execs"][3]
PY
# floats in their shortest form, as the text listing prints them
grep -q '"y": 0.1$' dry.json || fail "y=0.1 not printed as 0.1: $(cat dry.json)"

# --json alone is an error: nothing is run
rc=0; "$PD" bench study.yaml --json >out.log 2>err.log || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--json goes with --dry-run" err.log || fail "--json without --dry-run: rc $rc $(cat err.log)"
[ ! -e wd/run_001 ] || fail "--json without --dry-run ran the study"
echo "bench_dry_run_json: ok"
