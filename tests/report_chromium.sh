#!/bin/sh
# The fixtures' HTML reports in headless Chromium (make check-report, which
# installs chromium and sets REPORT_CHROMIUM=1; inside check-unit it skips).
#  1. a control page with console.error and an uncaught exception must be
#     caught by the console check, so the check itself is known to work;
#  2. the report loads with no console message at all (it has no script, so
#     any CONSOLE line on stderr is an error);
#  3. the DOM Chromium built holds every chart, cell and bar of the markup;
#  4. on a copy with a tiny probe script, the charts outside the folded
#     section, the heatmap cells and the bars have a rendered size;
#  5. layout, at 1400 px and 390 px wide, of run_001, of membw_demo (the
#     README demo's study, tests/fixtures/report/membw_demo/README.md) and of
#     a generated 3-variable study (parallel coordinates), with
#     every folded section opened: no element reaches past the viewport (a
#     wide table scrolls inside its own box, so only the box counts), no two
#     text boxes of a chart overlap, no axis of non-negative data goes below
#     zero (nor shows a negative tick), no chart is drawn without data; the
#     probe first proves it sees each fault on a planted page;
#  6. screenshots of both widths (kept in $BUILD/report-check/);
#  7. the uPlot time series (issue #17 item 3), at both widths: every
#     figure with data got a uPlot chart whose canvas has a size inside the
#     viewport and whose static SVG is hidden; on the first chart a drag
#     zooms, a Shift+drag pans, clicking a legend entry hides and shows its
#     series, and a double-click goes back to the whole time axis, from 0
#     (synthetic mouse events, uPlot's own handlers);
#  8. the demo's placement study (examples/sim_study.yaml --machine demo,
#     what `make demo` runs): per-task bars, clean layout, and the demo's
#     reports (it and membw_demo) under 1 MB.
# A build without uPlot (registry unreachable, UPLOT=off) fails here.
# Element counts and boxes, not pixels. Needs ~30 s.
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
sizes=""
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
grep -q 'window.pdUplots' "$out/report.html" ||
    fail "no uPlot in $BUILD/paddiser, the page says: $(grep -o 'this paddiser was built without uPlot ([^<]*' "$out/report.html" | head -1) (make all retries the fetch; docs/report.md, Interactive charts)"
nts=$(count 'class="pd-chart pd-ts"' "$out/report.html")
[ "$(count 'data-pd-ts=' "$out/report.html")" = "$nts" ] || fail "not every time-series figure carries its data"

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
for pat in 'class="pd-chart ' 'class="pd-chart pd-line"' 'class="pd-chart pd-heatmap"' 'class="pd-chart pd-box"' \
    'class="pd-chart pd-ts"' 'class="pd-chart pd-bars"' 'class="pd-cell"' 'class="pd-bar"' \
    'class="pd-makespan"'; do
    src=$(count "$pat" "$out/report.html")
    dom=$(count "$pat" "$out/report.dom")
    [ "$src" -gt 0 ] || fail "no $pat in the report"
    [ "$src" = "$dom" ] || fail "$pat: $src in the markup, $dom in Chromium's DOM"
done
[ "$(count 'class="pd-chart ' "$out/report.dom")" = 118 ] || fail "expected 118 charts in the DOM"
[ "$(count 'class="pd-cell"' "$out/report.dom")" = 70 ] || fail "expected 70 heatmap cells"
[ "$(count 'class="pd-bar"' "$out/report.dom")" = 24 ] || fail "expected 24 task bars"

# 4. rendered sizes, measured by a probe script on a copy (checkVisibility:
#    content of a closed <details> is laid out but not rendered)
probe='<script>(function(){function n(s,w,h){return [].filter.call(document.querySelectorAll(s),function(e){if(!e.checkVisibility())return false;var r=e.getBoundingClientRect();return r.width>=w?r.height>=h:false;}).length;}var b=document.body;b.setAttribute("data-pd-charts",n("svg.pd-chart",150,100));b.setAttribute("data-pd-canvas",n("div.pd-uplot canvas",150,90));b.setAttribute("data-pd-cells",n("rect.pd-cell",5,5));b.setAttribute("data-pd-bars",n("rect.pd-bar",2,1));b.setAttribute("data-pd-folded",document.querySelectorAll("details:not([open]) svg.pd-chart").length);})();</script>'
sed "s|</body>|$probe</body>|" "$out/report.html" >"$out/probe.html"
chrome --dump-dom "file://$out/probe.html" >"$out/probe.dom" 2>"$out/probe.log" || fail "chromium failed on the probe page"
attr() { grep -o "$1=\"[0-9]*\"" "$out/probe.dom" | head -1 | grep -o '[0-9][0-9]*'; }
charts=$(attr data-pd-charts); canvas=$(attr data-pd-canvas); cells=$(attr data-pd-cells); bars=$(attr data-pd-bars); folded=$(attr data-pd-folded)
[ -n "$charts" ] || fail "probe script did not run (see $out/probe.log)"
# the folded "more resource metrics" charts are not laid out until opened
[ "$folded" = 32 ] || fail "expected 32 folded charts, got $folded"
# the time series are uPlot canvases; their static SVGs are hidden
[ "$charts" = $((118 - folded - nts)) ] || fail "rendered charts: $charts, expected $((118 - folded - nts))"
[ "$canvas" = "$nts" ] || fail "rendered uPlot canvases: $canvas, expected $nts"
[ "$cells" = 70 ] || fail "rendered heatmap cells: $cells, expected 70"
[ "$bars" = 24 ] || fail "rendered bars: $bars, expected 24"

# 5. layout at two widths. The probe opens every <details>, measures, and
#    writes what it found on <body> (the first offender of each kind named).
cat >"$out/layout.js" <<'PROBE_JS'
(function () {
  /* run inside the frame of a wrapper page: results go on the wrapper's body */
  var iw = window.innerWidth, vw = document.documentElement.clientWidth, b = document.body;
  var sink = window.parent !== window ? window.parent.document.body : b;
  [].forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  function name(e) {
    var s = e.tagName.toLowerCase() + (e.getAttribute("class") ? "." + e.getAttribute("class").replace(/ /g, ".") : "");
    var c = e.closest("svg.pd-chart");
    if (c && c !== e) s += " in chart '" + (c.querySelector("title") || {}).textContent + "'";
    return s + " '" + (e.textContent || "").slice(0, 40) + "'";
  }
  var over = [], overlaps = [], neg = [], empty = [];
  [].forEach.call(b.querySelectorAll("*"), function (e) {
    if (!e.checkVisibility() || e.tagName === "SCRIPT") return;
    /* a wide table scrolls inside its box: its cells may lie outside */
    var t = e.closest("table.pd-table");
    if (t && t !== e) return;
    var r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.right > vw + 0.5 || r.left < -0.5) over.push(name(e) + " [" + Math.round(r.left) + "," + Math.round(r.right) + "]");
  });
  if (document.documentElement.scrollWidth > vw) over.push("page scrollWidth " + document.documentElement.scrollWidth);
  [].forEach.call(document.querySelectorAll("svg.pd-chart"), function (svg) {
    if (!svg.checkVisibility()) return;
    var boxes = [].map.call(svg.querySelectorAll("text"), function (t) { return [t, t.getBoundingClientRect()]; })
      .filter(function (p) { return p[1].width > 0 && p[1].height > 0; });
    for (var i = 0; i < boxes.length; i++)
      for (var j = i + 1; j < boxes.length; j++) {
        var p = boxes[i][1], q = boxes[j][1];
        var ox = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        var oy = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (ox > 1 && oy > 1) overlaps.push(name(boxes[i][0]) + " / " + name(boxes[j][0]));
      }
    var dlo = svg.getAttribute("data-data-lo"), ylo = svg.getAttribute("data-y-lo");
    if (dlo !== null && parseFloat(dlo) >= 0) {
      var negtick = [].some.call(svg.querySelectorAll("text.pd-tick"), function (t) { return /^[-\u2212]/.test(t.textContent); });
      if (parseFloat(ylo) < 0 || negtick) neg.push(name(svg));
    }
    if (!svg.querySelector(".pd-line-path,.pd-point,.pd-cell,.pd-bar") || svg.querySelector(".pd-nodata"))
      empty.push(name(svg));
  });
  sink.setAttribute("data-pd-vw", iw);
  sink.setAttribute("data-pd-checked", document.querySelectorAll("svg.pd-chart").length);
  [["overflow", over], ["overlap", overlaps], ["negaxis", neg], ["empty", empty]].forEach(function (k) {
    sink.setAttribute("data-pd-" + k[0], k[1].length);
    sink.setAttribute("data-pd-" + k[0] + "-first", k[1].length ? k[1][0].replace(/"/g, "'") : "");
  });
})();
PROBE_JS
# the uPlot charts: counts, then zoom, pan and legend toggling on the first
cat >"$out/live.js" <<'PROBE_JS'
(function () {
  var sink = window.parent !== window ? window.parent.document.body : document.body;
  var plots = window.pdUplots || [], vw = document.documentElement.clientWidth;
  function set(k, v) { sink.setAttribute("data-pd-live-" + k, v); }
  set("plots", plots.length);
  set("figs", document.querySelectorAll("figure[data-pd-ts]").length);
  set("canvas", [].filter.call(document.querySelectorAll("div.pd-uplot canvas"), function (c) {
    if (!c.checkVisibility()) return false;
    var r = c.getBoundingClientRect();
    return r.width >= 150 && r.height >= 90 && r.left >= -0.5 && r.right <= vw + 0.5;
  }).length);
  set("svgshown", [].filter.call(document.querySelectorAll("figure.pd-live > svg.pd-chart"),
    function (e) { return e.checkVisibility(); }).length);
  if (!plots.length) { set("steps", "none"); return; }
  var u = plots[0], steps = [], x0 = u.scales.x.min, x1 = u.scales.x.max, w, a0 = x0, a1 = x1;
  function mouse(type, fx, shift) {
    var r = u.over.getBoundingClientRect();
    var ev = new MouseEvent(type, { bubbles: true, cancelable: true, view: window, button: 0, buttons: 1,
      clientX: r.left + fx * r.width, clientY: r.top + r.height / 2, shiftKey: !!shift, movementX: 1, movementY: 1 });
    (type === "mouseup" ? document : u.over).dispatchEvent(ev);
  }
  function row() { return u.root.querySelectorAll(".u-legend tr.u-series")[1]; }
  /* uPlot commits in a microtask: each check waits for it */
  Promise.resolve().then(function () {
    mouse("mousedown", 0.2); mouse("mousemove", 0.4); mouse("mousemove", 0.6); mouse("mouseup", 0.6);
  }).then(function () {
    w = u.scales.x.max - u.scales.x.min;
    steps.push(w < 0.6 * (x1 - x0) && u.scales.x.min > x0 ? "zoom" : "nozoom[" + u.scales.x.min + "," + u.scales.x.max + "]");
    x0 = u.scales.x.min;
    mouse("mousedown", 0.6, true); mouse("mousemove", 0.4, true); mouse("mouseup", 0.4, true);
  }).then(function () {
    var w2 = u.scales.x.max - u.scales.x.min;
    steps.push(u.scales.x.min > x0 && Math.abs(w2 - w) <= 1e-9 * Math.max(1, w) ? "pan" : "nopan[" + u.scales.x.min + "," + w2 + "]");
    row().querySelector("th").click();
  }).then(function () {
    steps.push(u.series[1].show === false && row().classList.contains("u-off") ? "hide" : "nohide");
    row().querySelector("th").click();
  }).then(function () {
    steps.push(u.series[1].show === true && !row().classList.contains("u-off") ? "show" : "noshow");
    u.over.dispatchEvent(new MouseEvent("dblclick", { bubbles: true, cancelable: true, view: window }));
  }).then(function () {
    /* back to the whole repetition, whose axis starts at 0 as the SVG's */
    steps.push(u.scales.x.min === a0 && u.scales.x.max === a1 && a0 === 0 ? "reset" : "noreset[" + u.scales.x.min + "," + u.scales.x.max + "]");
    set("steps", steps.join(","));
  }).catch(function (e) { set("steps", "error " + e); });
})();
PROBE_JS
# framed HTML WIDTH HEIGHT OUT [probe]: a wrapper page holding HTML (with the
# probe appended when asked) in a WIDTH x HEIGHT frame. Headless Chromium
# lays a window out at least 500 px wide, so narrower widths are a frame's
# viewport (its own media queries and innerWidth), like a phone's.
framed() {
    { printf '<!DOCTYPE html><html><head><meta charset="utf-8"/><title>%s px</title>' "$2"
      printf '<style>body{margin:0;background:#d8d8d8}iframe{border:0;display:block;background:#fff}</style>'
      printf '</head><body><iframe width="%s" height="%s" srcdoc="' "$2" "$3"
      { grep -v -e '^</body>$' -e '^</html>$' "$1"
        if [ "${5:-}" = probe ]; then printf '<script>'; cat "$out/layout.js" "$out/live.js"; printf '</script>\n'; fi
        printf '</body>\n</html>\n'; } | sed -e 's/&/\&amp;/g' -e 's/"/\&quot;/g'
      printf '"></iframe></body></html>\n'; } >"$4"
}
# layout NAME HTML WIDTH: runs the probe; sets the globals of its counts
layout() {
    framed "$2" "$3" 900 "$out/$1-$3.html" probe
    chrome --hide-scrollbars --window-size="$(( $3 < 500 ? 500 : $3 )),900" --dump-dom "file://$out/$1-$3.html" \
        >"$out/$1-$3.dom" 2>"$out/$1-$3.log" || fail "chromium failed on $1 at $3 px"
    dom=$out/$1-$3.dom
    vw=$(grep -o 'data-pd-vw="[0-9]*"' "$dom" | grep -o '[0-9][0-9]*' || true)
    [ "$vw" = "$3" ] || fail "$1 at $3 px: the probe saw a viewport of '${vw}' px (see $out/$1-$3.log)"
    for k in overflow overlap negaxis empty; do
        n=$(grep -o "data-pd-$k=\"[0-9]*\"" "$dom" | grep -o '[0-9][0-9]*')
        first=$(grep -o "data-pd-$k-first=\"[^\"]*\"" "$dom" | sed 's/^[^"]*"//; s/"$//')
        eval "got_$k=\$n; first_$k=\$first"
    done
    checked=$(grep -o 'data-pd-checked="[0-9]*"' "$dom" | grep -o '[0-9][0-9]*')
    for k in plots figs canvas svgshown steps; do
        eval "live_$k=\$(grep -o 'data-pd-live-$k=\"[^\"]*\"' \"\$dom\" | sed 's/^[^\"]*\"//; s/\"\$//')"
    done
}

# the probe sees each fault on a planted page (else a pass means nothing)
cat >"$out/planted.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/><title>planted</title></head>
<body>
<div style="width:1800px">too wide</div>
<svg xmlns="http://www.w3.org/2000/svg" class="pd-chart pd-line" data-y-lo="-20000" data-data-lo="5" width="300" height="100"><title>planted</title>
<text class="pd-tick" x="10" y="20">-20000</text><text class="pd-tick" x="14" y="22">overlapping</text></svg>
</body>
</html>
EOF
layout planted "$out/planted.html" 390
[ "$got_overflow" -ge 1 ] || fail "the layout probe misses an element wider than the viewport"
[ "$got_overlap" -ge 1 ] || fail "the layout probe misses overlapping text"
[ "$got_negaxis" = 1 ] || fail "the layout probe misses a negative axis of non-negative data"
[ "$got_empty" = 1 ] || fail "the layout probe misses an empty chart"

"$BUILD/paddiser" report "$TESTS_DIR/fixtures/report/membw_demo" -o "$out/membw.html" >/dev/null ||
    fail "paddiser report of membw_demo failed"
# a study of 3 swept variables (size 1..64, threads 1..3, mode a/b; the
# same as test_three_vars_and_log_axis): parallel coordinates
three=$out/three_vars
e=0
printf 'execution_id,repetition,size,threads,mode,bw_mbs\n' >"$out/three.csv"
for s in 1 2 4 8 16 32 64; do for t in 1 2 3; do for m in a b; do
    e=$((e + 1)); id=$(printf 'exec_%04d' "$e")
    mkdir -p "$three/$id"
    printf '{"size": %d, "threads": %d, "mode": "%s"}' "$s" "$t" "$m" >"$three/$id/__iops_params.json"
    printf '%s,1,%d,%d,%s,%d\n%s,2,%d,%d,%s,%d\n' "$id" "$s" "$t" "$m" $((s * t + 1)) "$id" "$s" "$t" "$m" $((s * t + 2)) >>"$out/three.csv"
done; done; done
mv "$out/three.csv" "$three/results.csv"
"$BUILD/paddiser" report "$three" -o "$out/three.html" >/dev/null || fail "paddiser report of three_vars failed"
[ "$(count 'class="pd-chart pd-parcoords"' "$out/three.html")" = 1 ] || fail "three_vars: no parallel coordinates"

# 8. the demo's placement study and the demo's sizes (under 1 MB each)
PADDISER_BIN=$(cd "$BUILD" && pwd)/paddiser "$BUILD/paddiser" bench "$TESTS_DIR/../examples/sim_study.yaml" \
    --machine demo --workdir "$out/placement" -q >"$out/placement.log" 2>&1 || fail "the demo's placement study failed (see $out/placement.log)"
cp "$out/placement/run_001/report.html" "$out/placement.html"
[ "$(count 'class="pd-chart pd-bars"' "$out/placement.html")" = 96 ] || fail "placement demo: expected 96 per-task bar charts (16 executions x 6 policies)"
for f in membw placement; do
    size=$(wc -c <"$out/$f.html" | tr -d ' ')
    [ "$size" -lt 1000000 ] || fail "$f report is $size bytes, over 1 MB"
    sizes="$sizes $f:${size}B"
done

# REPORT_EXTRA_RUNS="DIR ...": more run directories to lay out (by hand,
# e.g. a run of examples/sim_study.yaml)
extra=""
k=0
for d in ${REPORT_EXTRA_RUNS:-}; do
    k=$((k + 1))
    "$BUILD/paddiser" report "$d" -o "$out/extra$k.html" >/dev/null || fail "paddiser report of $d failed"
    extra="$extra extra$k"
done

summary=""
[ "$(count 'data-pd-ts=' "$out/membw.html")" -gt 0 ] || fail "membw_demo has no time series for uPlot"
for name in report membw three placement $extra; do
    for w in 1400 390; do
        layout "$name" "$out/$name.html" "$w"
        [ "$got_overflow" = 0 ] || fail "$name at $w px: $got_overflow elements past the viewport, first: $first_overflow"
        [ "$got_overlap" = 0 ] || fail "$name at $w px: $got_overlap overlapping text pairs, first: $first_overlap"
        [ "$got_negaxis" = 0 ] || fail "$name at $w px: $got_negaxis charts of non-negative data with an axis below 0, first: $first_negaxis"
        [ "$got_empty" = 0 ] || fail "$name at $w px: $got_empty charts without data, first: $first_empty"
        [ "$live_plots" = "$live_figs" ] || fail "$name at $w px: $live_plots uPlot charts for $live_figs time-series figures"
        [ "$live_canvas" = "$live_figs" ] || fail "$name at $w px: $live_canvas of $live_figs uPlot canvases rendered inside the viewport"
        [ "$live_svgshown" = 0 ] || fail "$name at $w px: $live_svgshown static SVGs still shown beside their uPlot chart"
        if [ "$live_figs" -gt 0 ]; then
            [ "$live_steps" = "zoom,pan,hide,show,reset" ] || fail "$name at $w px: uPlot interaction: '$live_steps' (want zoom,pan,hide,show,reset)"
        fi
        summary="$summary $name@${w}px:${checked}charts,${live_plots}uplot"
    done
done

# 6. screenshots of the top of the page at both widths (390 px: the frame,
#    with the grey rest of the 500 px window on its right)
for w in 1400 390; do
    framed "$out/membw.html" "$w" 2400 "$out/shot-$w.html"
    chrome --hide-scrollbars --window-size="$(( w < 500 ? 500 : w )),2400" --screenshot="$out/report-$w.png" \
        "file://$out/shot-$w.html" >/dev/null 2>"$out/shot-$w.log" || fail "screenshot at $w px failed"
    size=$(wc -c <"$out/report-$w.png" | tr -d ' ')
    [ "$size" -gt 50000 ] || fail "screenshot at $w px is suspiciously small ($size bytes): blank page?"
done
# one section alone (the others hidden), both widths: run_001's time series
# (uPlot) and the placement demo's per-task bars
shot_section() { # NAME HTML SECTION_ID
    sed "s|</head>|<style>section:not(#$3){display:none}</style></head>|" "$2" >"$out/$1-only.html"
    for w in 1400 390; do
        framed "$out/$1-only.html" "$w" 1400 "$out/shot-$1-$w.html"
        chrome --hide-scrollbars --window-size="$(( w < 500 ? 500 : w )),1400" --screenshot="$out/report-$1-$w.png" \
            "file://$out/shot-$1-$w.html" >/dev/null 2>"$out/shot-$1-$w.log" || fail "$1 screenshot at $w px failed"
    done
}
shot_section ts "$out/report.html" pd-timeseries
shot_section tasks "$out/placement.html" pd-tasks
echo "report_chromium: ok ($charts charts rendered + $folded folded, $cells cells, $bars bars; layout clean:$summary; uPlot zoom/pan/toggle ok; sizes$sizes; screenshots $out/report-1400.png, $out/report-390.png, $out/report-ts-*.png, $out/report-tasks-*.png)"
