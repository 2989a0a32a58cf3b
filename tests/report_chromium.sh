#!/bin/sh
# The fixture's HTML report in headless Chromium (make check-report, which
# installs chromium and sets REPORT_CHROMIUM=1; inside check-unit it skips).
#  1. a control page with console.error and an uncaught exception must be
#     caught by the console check, so the check itself is known to work;
#  2. the report loads with no console message at all (it has no script, so
#     any CONSOLE line on stderr is an error);
#  3. the DOM Chromium built holds every chart, cell and bar of the markup;
#  4. on a copy with a tiny probe script, the charts outside the folded
#     section, the heatmap cells and the bars have a rendered size;
#  5. a screenshot is taken (kept in $BUILD/report-check/report.png).
# Element counts, not pixels. Needs ~10 s.
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
if [ "${REPORT_CHROMIUM:-}" != 1 ]; then
    echo "report_chromium: skipped here (make check-report runs it)"
    exit 0
fi
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null 2>&1 || { echo "report_chromium: $CHROMIUM not installed" >&2; exit 1; }
fixture=$TESTS_DIR/fixtures/report/run_001
out=$BUILD/report-check
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT
fail() { echo "report_chromium: $*" >&2; exit 1; }

# chrome ARGS...: one headless run with a fresh profile, stderr logging on
chrome() {
    timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run \
        --user-data-dir="$(mktemp -d -p "$profiles")" --enable-logging=stderr --v=0 "$@"
}
console_lines() { grep -E ':CONSOLE[(:]' "$1" || true; }
count() { grep -o "$1" "$2" | wc -l | tr -d ' '; }

"$BUILD/paddiser" report "$fixture" -o "$out/report.html" >/dev/null || fail "paddiser report failed"

# 1. the console check catches errors on this Chromium
cat >"$out/control.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"/><title>control</title></head>
<body><p>control</p><script>console.error("pd-control-error"); pd_undefined_function();</script></body></html>
EOF
chrome --dump-dom "file://$out/control.html" >"$out/control.dom" 2>"$out/control.log" || fail "chromium failed on the control page"
console_lines "$out/control.log" | grep -q pd-control-error || fail "console check misses console.error (see $out/control.log)"
console_lines "$out/control.log" | grep -q "Uncaught ReferenceError" || fail "console check misses exceptions"

# 2 + 3. the report: no console message, full DOM
chrome --dump-dom "file://$out/report.html" >"$out/report.dom" 2>"$out/report.log" || fail "chromium failed on the report"
msgs=$(console_lines "$out/report.log")
[ -z "$msgs" ] || fail "console messages while loading the report: $msgs"
for pat in 'class="pd-chart ' 'class="pd-chart pd-line"' 'class="pd-chart pd-heatmap"' \
    'class="pd-chart pd-ts"' 'class="pd-chart pd-bars"' 'class="pd-cell"' 'class="pd-bar"' \
    'class="pd-makespan"'; do
    src=$(count "$pat" "$out/report.html")
    dom=$(count "$pat" "$out/report.dom")
    [ "$src" -gt 0 ] || fail "no $pat in the report"
    [ "$src" = "$dom" ] || fail "$pat: $src in the markup, $dom in Chromium's DOM"
done
[ "$(count 'class="pd-chart ' "$out/report.dom")" = 116 ] || fail "expected 116 charts in the DOM"
[ "$(count 'class="pd-cell"' "$out/report.dom")" = 70 ] || fail "expected 70 heatmap cells"
[ "$(count 'class="pd-bar"' "$out/report.dom")" = 24 ] || fail "expected 24 task bars"

# 4. rendered sizes, measured by a probe script on a copy (checkVisibility:
#    content of a closed <details> is laid out but not rendered)
probe='<script>(function(){function n(s,w,h){return [].filter.call(document.querySelectorAll(s),function(e){if(!e.checkVisibility())return false;var r=e.getBoundingClientRect();return r.width>=w?r.height>=h:false;}).length;}var b=document.body;b.setAttribute("data-pd-charts",n("svg.pd-chart",150,100));b.setAttribute("data-pd-cells",n("rect.pd-cell",5,5));b.setAttribute("data-pd-bars",n("rect.pd-bar",2,1));b.setAttribute("data-pd-folded",document.querySelectorAll("details:not([open]) svg.pd-chart").length);})();</script>'
sed "s|</body>|$probe</body>|" "$out/report.html" >"$out/probe.html"
chrome --dump-dom "file://$out/probe.html" >"$out/probe.dom" 2>"$out/probe.log" || fail "chromium failed on the probe page"
attr() { grep -o "$1=\"[0-9]*\"" "$out/probe.dom" | head -1 | grep -o '[0-9][0-9]*'; }
charts=$(attr data-pd-charts); cells=$(attr data-pd-cells); bars=$(attr data-pd-bars); folded=$(attr data-pd-folded)
[ -n "$charts" ] || fail "probe script did not run (see $out/probe.log)"
# the folded "more resource metrics" charts are not laid out until opened
[ "$folded" = 32 ] || fail "expected 32 folded charts, got $folded"
[ "$charts" = $((116 - folded)) ] || fail "rendered charts: $charts, expected $((116 - folded))"
[ "$cells" = 70 ] || fail "rendered heatmap cells: $cells, expected 70"
[ "$bars" = 24 ] || fail "rendered bars: $bars, expected 24"

# 5. screenshot of the top of the page
chrome --hide-scrollbars --window-size=1400,2400 --screenshot="$out/report.png" "file://$out/report.html" \
    >/dev/null 2>"$out/shot.log" || fail "screenshot failed"
size=$(wc -c <"$out/report.png" | tr -d ' ')
[ "$size" -gt 50000 ] || fail "screenshot is suspiciously small ($size bytes): blank page?"
echo "report_chromium: ok ($charts charts rendered + $folded folded, $cells cells, $bars bars; screenshot $out/report.png)"
