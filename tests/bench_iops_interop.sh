#!/bin/sh
# IOPS 3.5.8's own tools on paddiser's runs and back (issue #15): `iops
# find` and `iops report` on a paddiser run directory of the membw demo
# (examples/membw, smaller), then IOPS runs a study and paddiser's
# `--summarize` and `report` read its run directory. IOPS's source is not
# in this repository: `make check-iops-interop IOPS_SRC=DIR` (DIR holds
# IOPS's iops/ package) installs Debian's python3-pandas, python3-jinja2,
# python3-yaml and python3-plotly and runs this; in the unit suite it
# skips. Nothing is fetched from the network.
set -eu
if [ -z "${IOPS_SRC:-}" ]; then
    echo "bench_iops_interop: SKIP (run by make check-iops-interop IOPS_SRC=DIR)"; exit 0
fi
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PD=$(cd "$BUILD" && pwd)/paddiser
export MEMBW_BIN=${MEMBW_BIN:-$(cd "$BUILD" && pwd)/membw-triad}
# Debian's interpreter, where the python3-* packages are (a pyenv python3
# first on PATH would not see them)
PY=${IOPS_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
IOPS_SRC=$(cd "$IOPS_SRC" && pwd)
[ -f "$IOPS_SRC/iops/__main__.py" ] || { echo "bench_iops_interop: $IOPS_SRC has no iops/__main__.py" >&2; exit 2; }
T=$(mktemp -d /tmp/pd-iops-interop.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
iops() { PYTHONPATH=$IOPS_SRC "$PY" -m iops "$@"; }
cd "$T"
echo "bench_iops_interop: IOPS $(cat "$IOPS_SRC/iops/VERSION" 2>/dev/null || echo '?') from $IOPS_SRC, $PY"

# 1. paddiser runs the membw demo study (2 sizes x 2 thread counts, 1
# repetition, 3 passes), then IOPS's find and report read it
sed -e 's/values: \[16, 64, 192\]/values: [16, 64]/' -e 's/repetitions: 2/repetitions: 1/' -e 's/-r 20/-r 3/' \
    "$ROOT/examples/membw/membw.yaml" >membw.yaml
"$PD" bench membw.yaml --workdir wd -q >pd.out 2>pd.err || { cat pd.err; fail "paddiser bench"; }
R=$T/wd/run_001
iops find "$R" >find.out 2>&1 || { cat find.out; fail "iops find"; }
cat find.out
grep -q '^Benchmark: membw-triad' find.out || fail "iops find: no benchmark name"
[ "$(grep -c '^exec_000[1-4] *SUCCEEDED ' find.out)" -eq 4 ] || fail "iops find: not 4 SUCCEEDED executions"
iops find "$R" threads=2 --show-command >find2.out 2>&1 || { cat find2.out; fail "iops find threads=2"; }
[ "$(grep -c '^exec_000[24] *SUCCEEDED ' find2.out)" -eq 2 ] || { cat find2.out; fail "iops find threads=2: not exec_0002 and exec_0004"; }
grep -q 'membw-triad' find2.out || fail "iops find --show-command: no command"
iops find "$R/exec_0003" >find3.out 2>&1 || { cat find3.out; fail "iops find exec_0003"; }
grep -q '^Status: SUCCEEDED' find3.out || { cat find3.out; fail "iops find exec_0003: status"; }
grep -q 'size_mib: 64' find3.out || fail "iops find exec_0003: parameters"
iops report "$R" >report.out 2>&1 || { cat report.out; fail "iops report"; }
grep -q 'Report generated' report.out || { cat report.out; fail "iops report: no report"; }
[ -s "$R/analysis_report.html" ] || fail "iops report: no analysis_report.html"
grep -q 'bandwidth_mbs' "$R/analysis_report.html" || fail "iops report: bandwidth_mbs not in the report"

# 2. IOPS runs the fixture's study; paddiser reads IOPS's run directory
sed -e 's/sleep 1.5/sleep 1/' -e 's|workdir: "./wd"|workdir: "./wd_iops"|' \
    "$ROOT/tests/fixtures/bench/iops_run/study.yaml" >study.yaml
iops run study.yaml >iops_run.out 2>&1 || { tail -20 iops_run.out; fail "iops run"; }
I=$T/wd_iops/run_001
[ -d "$I/runs" ] || fail "IOPS's run directory has no runs/ level: $(ls "$I")"
"$PD" bench --summarize "$I" || fail "paddiser bench --summarize on IOPS's run"
"$PD" report "$I" -o iops_report.html || fail "paddiser report on IOPS's run"
grep -q 'bandwidth_mbs' iops_report.html || fail "paddiser report: IOPS's metrics not shown"
echo "bench_iops_interop: ok"
