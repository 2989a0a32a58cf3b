/* Interactive time series (issue #17 item 3): uPlot, embedded at build time
 * (report/uplot_assets.h), is inlined into the page with a small script that
 * turns each time-series figure into a uPlot chart: drag to zoom, Shift+drag
 * to pan, double-click to reset, click a legend entry to toggle its series.
 * The static SVG stays in the markup and is what a reader without JavaScript
 * (or a build without uPlot) sees; the script hides it once its chart is up.
 * The data travel in the figure's data-pd-ts attribute as JSON. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "report/svg.h"
#include "report/uplot_assets.h"

/* Our own rules: the live chart replaces the SVG; uPlot's text at the
 * page's sizes; the legend wraps (it is inline) and never widens the page. */
static const char live_css[] =
    "figure.pd-live>svg.pd-chart{display:none}"
    ".pd-uplot{max-width:100%;overflow:hidden}"
    ".pd-uplot .u-title{font-size:13px;line-height:1.3}"
    ".pd-uplot .u-legend{font-size:12px;max-width:100%}"
    ".pd-uplot .u-legend th{font-weight:normal}"
    ".pd-uplot .u-legend .u-value{min-width:4em}"
    ".pd-uplot .u-inline tr{margin-right:10px}";

/* Builds the charts, in pdPal's colours (svg.c's palette, written before it
 * by pd_page_live_scripts), so they match the static SVG.
 * The x range is widened to [0, the repetition's end] only when uPlot asks
 * for the data's own extent (first draw, double-click reset), not on zoom.
 * window.pdUplots keeps the instances (check-report drives them). */
static const char live_js[] =
    "(function(){\n"
    "if(typeof uPlot!==\"function\")return;\n"
    "var pal=pdPal;\n"
    "var plots=window.pdUplots=[],F=\"11px sans-serif\",L=\"bold 11px sans-serif\";\n"
    "function fit(fig){var g=fig.parentNode.getBoundingClientRect().width-16;return Math.max(160,Math.min(400,"
    "Math.floor(g)));}\n"
    "function pan(u){\n"
    " u.root.addEventListener(\"mousedown\",function(e){\n"
    "  if(!(e.shiftKey||e.button===1)||!u.over.contains(e.target))return;\n"
    "  e.preventDefault();e.stopPropagation();\n"
    "  var x0=e.clientX,mn=u.scales.x.min,mx=u.scales.x.max,pw=u.over.getBoundingClientRect().width;\n"
    "  function mv(ev){var dx=(ev.clientX-x0)/pw*(mx-mn);u.setScale(\"x\",{min:mn-dx,max:mx-dx});}\n"
    "  function up(){document.removeEventListener(\"mousemove\",mv);document.removeEventListener(\"mouseup\",up);}\n"
    "  document.addEventListener(\"mousemove\",mv);document.addEventListener(\"mouseup\",up);\n"
    " },true);\n"
    "}\n"
    "[].forEach.call(document.querySelectorAll(\"figure[data-pd-ts]\"),function(fig){\n"
    " var d=JSON.parse(fig.getAttribute(\"data-pd-ts\"));\n"
    " if(!d.series.length)return;\n"
    " var tabs=d.series.map(function(s){return [s.t,s.y];});\n"
    " var data=tabs.length>1?uPlot.join(tabs):tabs[0];\n"
    " var w=fit(fig),box=document.createElement(\"div\");\n"
    " box.className=\"pd-uplot\";\n"
    " fig.insertBefore(box,fig.firstChild);\n"
    " var top=d.ytop;\n"
    " var u=new uPlot({title:d.title,width:w,height:Math.round(w*0.62),\n"
    "  scales:{x:{time:false,range:function(u,lo,hi){var x=u.data[0];"
    "return lo===x[0]&&hi===x[x.length-1]?[0,Math.max(d.x1,hi)]:[lo,hi];}},y:{range:function(u,lo,hi){var h=Math.max(top>0?top:0,hi>0?hi*1.05:1);"
    "return [Math.min(0,lo),h];}}},\n"
    "  axes:[{label:d.xlabel,size:36,labelSize:18,font:F,labelFont:L},{label:d.ylabel,labelSize:18,font:F,labelFont:L}],\n"
    "  cursor:{drag:{x:true,y:false}},\n"
    "  series:[{label:\"t [s]\"}].concat(d.series.map(function(s,i){return {label:s.name,stroke:pal[i%pal.length],"
    "width:1.5,spanGaps:true};}))\n"
    " },data,box);\n"
    " pan(u);\n"
    " fig.classList.add(\"pd-live\");\n"
    " plots.push(u);\n"
    "});\n"
    "var last=window.innerWidth;\n"
    "window.addEventListener(\"resize\",function(){if(window.innerWidth===last)return;last=window.innerWidth;"
    "plots.forEach(function(u){var f=u.root.parentNode.parentNode,w=fit(f);"
    "u.setSize({width:w,height:Math.round(w*0.62)});});});\n"
    "})();\n";

void pd_page_live_head(pd_page *pg)
{
    if (!pd_uplot_embedded)
        return;
    /* CDATA inside a CSS comment: well-formed XML, plain CSS to HTML */
    pd_str_append(pg->out, "<style>/*<![CDATA[*/");
    pd_str_appendn(pg->out, (const char *)pd_uplot_css, pd_uplot_css_len);
    pd_str_append(pg->out, live_css);
    pd_str_append(pg->out, "/*]]>*/</style>\n");
}

void pd_page_live_scripts(pd_page *pg)
{
    if (!pd_uplot_embedded)
        return;
    /* uplot-assets.sh refused files holding ]]> or </script */
    pd_str_printf(pg->out, "<script>//<![CDATA[\n/* uPlot %s, https://github.com/leeoniya/uPlot\n", pd_uplot_version);
    pd_str_appendn(pg->out, (const char *)pd_uplot_license, pd_uplot_license_len);
    pd_str_append(pg->out, "*/\n");
    pd_str_appendn(pg->out, (const char *)pd_uplot_js, pd_uplot_js_len);
    pd_str_append(pg->out, "\nvar pdPal=[");
    for (size_t i = 0; i < PD_SVG_NPALETTE; i++)
        pd_str_printf(pg->out, "%s\"%s\"", i ? "," : "", pd_svg_palette[i]);
    pd_str_append(pg->out, "];\n");
    pd_str_append(pg->out, live_js);
    pd_str_append(pg->out, "//]]>\n</script>\n");
}

bool pd_page_live(void) { return pd_uplot_embedded != 0; }

const char *pd_page_live_missing(void) { return pd_uplot_missing; }

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

void pd_page_ts_fig_open(pd_page *pg, const pd_rep_tsset *set, double t_end, const char *title,
                         const char *xlabel, const char *ylabel, double y_top)
{
    if (!pd_uplot_embedded) {
        pd_page_fig_open(pg);
        return;
    }
    json_t *d = json_object(), *series = json_array();
    json_object_set_new(d, "title", json_string(title));
    json_object_set_new(d, "xlabel", json_string(xlabel));
    json_object_set_new(d, "ylabel", json_string(ylabel));
    json_object_set_new(d, "ytop", json_real(y_top));
    /* the repetition's time axis, shared by its charts as in the SVG */
    json_object_set_new(d, "x1", json_real(t_end));
    for (size_t s = 0; s < set->n; s++) {
        const pd_rep_ts *ts = &set->s[s];
        if (ts->n < 2)
            continue;
        json_t *o = json_object(), *t = json_array(), *y = json_array();
        for (size_t i = 0; i < ts->n; i++) {
            json_array_append_new(t, num_or_null(ts->t[i]));
            json_array_append_new(y, num_or_null(ts->y[i]));
        }
        json_object_set_new(o, "name", json_string(ts->name));
        json_object_set_new(o, "t", t);
        json_object_set_new(o, "y", y);
        json_array_append_new(series, o);
    }
    json_object_set_new(d, "series", series);
    /* 6 significant digits: what the SVG resolves, and stable bytes */
    char *text = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(d);
    if (!text) {
        pd_page_fig_open(pg);
        return;
    }
    pg->n_live++;
    pd_str_append(pg->out, "<figure class=\"pd-ts-fig\" data-pd-ts=\"");
    pd_html_escape(pg->out, text);
    pd_str_append(pg->out, "\">");
    free(text);
}
