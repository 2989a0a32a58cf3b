#!/bin/sh
# `paddiser report` end to end on the fixture run directory: exit codes, the
# output file, well-formed markup (xmllint when installed), nothing fetched.
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
bin=$BUILD/paddiser
fixture=$TESTS_DIR/fixtures/report/run_001
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_cli: $*" >&2; exit 1; }

"$bin" report "$fixture" -o "$tmp/r.html" >"$tmp/out" || fail "report on the fixture failed"
grep -q "wrote $tmp/r.html" "$tmp/out" || fail "no 'wrote' line"
[ -s "$tmp/r.html" ] || fail "empty report"

# default output: RUN_DIR/report.html (on a copy: the fixture stays clean)
cp -r "$fixture" "$tmp/run_001"
"$bin" report "$tmp/run_001" >/dev/null || fail "report with the default path failed"
cmp -s "$tmp/r.html" "$tmp/run_001/report.html" || fail "same run dir gave different bytes"

# self-contained: at most one script, inline (uPlot, when the build has it:
# docs/report.md), nothing loaded from a URL
n=$(grep -o '<script' "$tmp/r.html" | wc -l | tr -d ' ')
[ "$n" -le 1 ] || fail "report contains $n scripts"
if grep -q -E '<script[^>]* src=|<link rel="stylesheet"|@import|url\(' "$tmp/r.html"; then fail "report loads a script or style"; fi
ext=$(grep -o -E '(src|href)="[^"#][^"]*"' "$tmp/r.html" | grep -v '"data:' || true)
[ -z "$ext" ] || fail "external references: $ext"

if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$tmp/r.html" || fail "report is not well-formed XML"
fi

# usage and errors
set +e
"$bin" report >/dev/null 2>&1; [ $? -eq 2 ] || fail "no argument should exit 2"
"$bin" report "$tmp/nope" 2>"$tmp/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "missing run dir should exit 1 (got $rc)"
grep -q "run directory $tmp/nope" "$tmp/err" || fail "error does not name the run dir"
"$bin" report --help | grep -q "usage: paddiser report RUN_DIR" || fail "--help"
echo "report_cli: ok"
