/* Page assembly: skeleton, inline CSS, overview; sections come from plots.c
 * and traces.c. The page is polyglot XHTML with inline SVG and no external
 * resource; its only script is the inlined uPlot (interactive.c), and the
 * same run directory gives the same bytes. */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/iops_meta.h"
#include "report/page.h"
#include "report/svg.h"

static const char css[] =
    "body{font:14px/1.45 sans-serif;margin:16px 24px;color:#222;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}"
    "h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:3px;margin:28px 0 8px}"
    "h3{font-size:15px;margin:18px 0 6px}"
    "nav{display:flex;flex-wrap:wrap;gap:2px 14px}"
    ".pd-meta{color:#555;margin:2px 0}"
    ".pd-grid{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}"
    "figure{margin:0;padding:6px;border:1px solid #ddd;border-radius:4px;background:#fcfcfc;"
    "display:flex;flex-direction:column}"
    "figcaption{font-size:12px;color:#555;width:0;min-width:100%}"
    ".pd-chart{display:block}"
    ".pd-chart text{font-family:sans-serif;font-size:11px;fill:#333}"
    ".pd-chart .pd-title{font-size:13px;font-weight:bold}"
    ".pd-chart .pd-axis-label{font-size:12px}"
    ".pd-chart .pd-nodata{fill:#999;font-size:13px}"
    ".pd-chart .pd-refline-label{fill:#b22}"
    ".pd-chart .pd-cell-label{fill:#000;font-size:10px}.pd-chart .pd-on-dark{fill:#fff}.pd-chart .pd-na{fill:#777}"
    ".pd-gridline{stroke:#e6e6e6}"
    /* parallel coordinates: tick labels stay readable over the lines */
    ".pd-parcoords .pd-tick{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}"
    ".pd-tickmark{stroke:#333}"
    ".pd-note{background:#f3f6fa;border-left:3px solid #8aa4c8;padding:4px 8px;margin:6px 0;font-size:13px}"
    ".pd-missing{background:#fff5e0;border-left-color:#e0a000}"
    "table.pd-table{border-collapse:collapse;font-size:12px;margin:4px 0}"
    ".pd-table th,.pd-table td{border:1px solid #ddd;padding:2px 7px;text-align:left}"
    ".pd-table td.pd-num{text-align:right;font-variant-numeric:tabular-nums}"
    ".pd-table th{background:#f0f0f0}"
    "details.pd-more{margin:10px 0}details.pd-more>summary{cursor:pointer;font-weight:bold;margin:6px 0}"
    /* narrow screens: charts shrink to the width (their text with them),
     * wide tables scroll inside their own box, long words wrap */
    "h1,h2,h3,p{overflow-wrap:anywhere}"
    "figure{max-width:100%;min-width:0;box-sizing:border-box}"
    "svg.pd-chart{max-width:100%;height:auto}"
    "table.pd-table{display:block;max-width:100%;overflow-x:auto}"
    ".pd-cmdcell{min-width:16em;max-width:40em}code.pd-cmd{font-size:11px;overflow-wrap:anywhere}"
    ".pd-impact-bar{display:inline-block;height:9px;background:#4e79a7;margin-right:6px;vertical-align:middle}"
    ".pd-table small,h3 small{font-weight:normal;color:#555}"
    /* narrow: one line per row, the table scrolls sideways in its box */
    "@media (max-width:600px){body{margin:8px 8px}.pd-grid{gap:8px}figure{padding:3px}"
    ".pd-best td,.pd-best th,.pd-best code.pd-cmd{white-space:nowrap;overflow-wrap:normal}}";

void pd_page_note(pd_page *pg, const char *cls, const char *fmt, ...)
{
    pd_str text = {0};
    va_list ap;
    va_start(ap, fmt);
    pd_str_vprintf(&text, fmt, ap);
    va_end(ap);
    pd_str_printf(pg->out, "<p class=\"pd-note%s%s\">", cls && cls[0] ? " " : "", cls ? cls : "");
    pd_html_escape(pg->out, text.data ? text.data : "");
    pd_str_append(pg->out, "</p>\n");
    pd_str_free(&text);
}

void pd_page_fig_open(pd_page *pg) { pd_str_append(pg->out, "<figure>"); }

void pd_page_fig_close(pd_page *pg, const char *caption)
{
    if (caption && caption[0]) {
        pd_str_append(pg->out, "<figcaption>");
        pd_html_escape(pg->out, caption);
        pd_str_append(pg->out, "</figcaption>");
    }
    pd_str_append(pg->out, "</figure>\n");
}

void pd_page_exec_vars(pd_page *pg, const pd_rep_exec *ex)
{
    for (size_t v = 0; v < ex->nvars; v++) {
        if (v)
            pd_str_append(pg->out, ", ");
        pd_html_escape(pg->out, ex->keys[v]);
        pd_str_append(pg->out, "=");
        pd_html_escape(pg->out, ex->vals[v]);
    }
}

static const char *base_name(const char *path, char *buf, size_t buflen)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    const char *end = path + len, *p = end;
    while (p > path && p[-1] != '/')
        p--;
    size_t n = (size_t)(end - p);
    if (n >= buflen)
        n = buflen - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

static void load_tables(pd_page *pg)
{
    pd_str rp = {0}, sp = {0};
    pd_str_printf(&rp, "%s/results.csv", pg->run_dir);
    pd_str_printf(&sp, "%s/__iops_resource_summary.csv", pg->run_dir);
    if (pg->run.nvars) {
        pg->vars = pg->run.vars;
        pg->nvars = pg->run.nvars;
        pg->vars_origin = "__iops_params.json";
    } else if (rp.data && sp.data) {
        /* no params files: both tables start with the same variable columns */
        bool flat;
        pg->nvars = pd_rep_common_prefix_vars(rp.data, sp.data, &pg->vars, &flat);
        pg->vars_origin = !pg->nvars ? NULL
                          : flat     ? "results.csv's vars.* columns"
                                     : "the columns results.csv and the summary share";
    }
    if (rp.data)
        pg->have_results = pd_rep_table_load(rp.data, pg->vars, pg->nvars, &pg->results,
                                             pg->results_err, sizeof pg->results_err) == 0;
    if (sp.data)
        pg->have_summary = pd_rep_table_load(sp.data, pg->vars, pg->nvars, &pg->summary,
                                             pg->summary_err, sizeof pg->summary_err) == 0;
    pd_str_free(&rp);
    pd_str_free(&sp);
}

/* Error text without the run directory prefix (the page names files only). */
static const char *rel_err(const pd_page *pg, const char *err)
{
    size_t n = strlen(pg->run_dir);
    if (!strncmp(err, pg->run_dir, n) && err[n] == '/')
        return err + n + 1;
    return err;
}

static void section_overview(pd_page *pg)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<section id=\"pd-overview\"><h2>Overview</h2>\n");
    size_t reps = 0, ok = 0, failed = 0, other = 0;
    for (size_t i = 0; i < pg->run.nexecs; i++) {
        reps += pg->run.execs[i].nreps;
        ok += pg->run.execs[i].n_succeeded;
        failed += pg->run.execs[i].n_failed;
        other += pg->run.execs[i].n_other;
    }
    pd_str_printf(o, "<p class=\"pd-meta\">%zu executions, %zu repetition directories (%zu succeeded, %zu "
                     "failed, %zu other status); ",
                  pg->run.nexecs, reps, ok, failed, other);
    if (pg->nvars) {
        pd_str_append(o, "variables: ");
        for (size_t v = 0; v < pg->nvars; v++) {
            pd_str_append(o, v ? ", <code>" : "<code>");
            pd_html_escape(o, pg->vars[v]);
            pd_str_append(o, "</code>");
        }
        pd_str_append(o, " (from ");
        pd_html_escape(o, pg->vars_origin);
        pd_str_append(o, ").</p>\n");
    } else {
        pd_str_append(o, "no variables known.</p>\n");
    }
    pd_str_append(o, "<p class=\"pd-meta\">Files: results.csv ");
    pd_str_append(o, pg->have_results ? "loaded" : "<strong>missing</strong>");
    pd_str_append(o, ", __iops_resource_summary.csv ");
    pd_str_append(o, pg->have_summary ? "loaded" : "<strong>missing</strong>");
    pd_str_append(o, ".</p>\n");
    if (!pg->run.nexecs)
        pd_page_note(pg, "pd-missing", "No exec_NNNN directories in the run directory: no parameters, "
                                       "statuses, traces or task files to show.");
    if (pg->run.n_bad_params)
        pd_page_note(pg, "pd-missing", "%zu __iops_params.json files could not be parsed as a JSON object.",
                     pg->run.n_bad_params);
    if (!pg->run.nexecs)
        goto done;
    pd_str_append(o, "<table class=\"pd-table pd-execs\"><thead><tr><th>execution</th>");
    for (size_t v = 0; v < pg->nvars; v++) {
        pd_str_append(o, "<th>");
        pd_html_escape(o, pg->vars[v]);
        pd_str_append(o, "</th>");
    }
    pd_str_append(o, "<th>repetitions</th><th>succeeded</th><th>failed</th><th>mean duration [s]</th>"
                     "</tr></thead><tbody>\n");
    for (size_t i = 0; i < pg->run.nexecs && i < PD_PAGE_MAX_OVERVIEW; i++) {
        const pd_rep_exec *ex = &pg->run.execs[i];
        pd_str_append(o, "<tr><td>");
        pd_html_escape(o, ex->id);
        pd_str_append(o, "</td>");
        for (size_t v = 0; v < pg->nvars; v++) {
            const char *val = "";
            for (size_t k = 0; k < ex->nvars; k++)
                if (!strcmp(ex->keys[k], pg->vars[v]))
                    val = ex->vals[k];
            pd_str_append(o, "<td>");
            pd_html_escape(o, val);
            pd_str_append(o, "</td>");
        }
        char dur[48] = "";
        if (ex->n_duration)
            pd_svg_fmt(dur, sizeof dur, ex->duration_sum / (double)ex->n_duration, 0.01);
        pd_str_printf(o,
                      "<td class=\"pd-num\">%zu</td><td class=\"pd-num\">%zu</td><td class=\"pd-num\">%zu</td>"
                      "<td class=\"pd-num\">%s</td></tr>\n",
                      ex->nreps, ex->n_succeeded, ex->n_failed, dur);
    }
    pd_str_append(o, "</tbody></table>\n");
    if (pg->run.nexecs > PD_PAGE_MAX_OVERVIEW)
        pd_page_note(pg, "", "%zu more executions not listed.", pg->run.nexecs - PD_PAGE_MAX_OVERVIEW);
done:
    pd_str_append(o, "</section>\n");
}

static void build_page(pd_page *pg)
{
    pd_str *o = pg->out, body = {0};
    char namebuf[256];
    const char *name = base_name(pg->run_dir, namebuf, sizeof namebuf);
    /* the body first: uPlot goes in only when it drew a time series */
    pg->out = &body;
    pd_str_append(&body, "<body>\n<h1>paddiser report: ");
    pd_html_escape(&body, name);
    pd_str_append(&body, "</h1>\n<nav><a href=\"#pd-summary\">Summary</a><a href=\"#pd-overview\">Overview</a><a href=\"#pd-results\">Results</a>"
                         "<a href=\"#pd-resources\">Resources</a><a href=\"#pd-heatmaps\">Heatmaps</a>"
                         "<a href=\"#pd-timeseries\">Time series</a><a href=\"#pd-tasks\">Per-task times</a></nav>\n");
    pd_page_section_summary(pg);
    section_overview(pg);
    pd_page_section_plots(pg);
    pd_page_section_heatmaps(pg);
    pd_page_section_traces(pg);
    pd_page_section_tasks(pg);
    pg->out = o;

    pd_str_append(o, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                     "<meta charset=\"utf-8\"/>\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<link rel=\"icon\" href=\"data:,\"/>\n<title>paddiser report: ");
    pd_html_escape(o, name);
    pd_str_printf(o, "</title>\n<style>%s</style>\n", css);
    if (pg->n_live)
        pd_page_live_head(pg);
    pd_str_append(o, "</head>\n");
    if (body.oom || !body.data)
        o->oom = true;
    else
        pd_str_appendn(o, body.data, body.len);
    pd_str_free(&body);
    if (pg->n_live)
        pd_page_live_scripts(pg);
    pd_str_append(o, "</body>\n</html>\n");
}

static bool has_file(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    return pd_path_join(path, sizeof path, dir, name) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int pd_report_write(const char *run_dir, const char *out_path, char *err, size_t errlen)
{
    struct stat st;
    if (!run_dir || !run_dir[0]) {
        snprintf(err, errlen, "no run directory given");
        return -1;
    }
    if (stat(run_dir, &st) != 0) {
        snprintf(err, errlen, "run directory %s: %s", run_dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "run directory %s: not a directory", run_dir);
        return -1;
    }
    /* a directory with nothing of a run (an empty one, a workdir) is an
     * error, not an empty report */
    char root[PATH_MAX];
    if (!pd_iops_exec_root(run_dir, root, sizeof root) && !has_file(run_dir, "results.csv") &&
        !has_file(run_dir, "__iops_resource_summary.csv")) {
        pd_iops_no_run_message(run_dir, err, errlen);
        return -1;
    }
    pd_str page = {0};
    pd_page pg = {.out = &page, .run_dir = run_dir};
    pd_rep_run_load(run_dir, &pg.run);
    load_tables(&pg);
    /* the page names files relative to the run directory */
    if (!pg.have_results) {
        const char *e = rel_err(&pg, pg.results_err);
        memmove(pg.results_err, e, strlen(e) + 1);
    }
    if (!pg.have_summary) {
        const char *e = rel_err(&pg, pg.summary_err);
        memmove(pg.summary_err, e, strlen(e) + 1);
    }
    build_page(&pg);

    if (pg.have_results)
        pd_rep_table_free(&pg.results);
    if (pg.have_summary)
        pd_rep_table_free(&pg.summary);
    if (pg.vars != pg.run.vars)
        pd_rep_names_free(pg.vars);
    pd_rep_run_free(&pg.run);

    int rc = 0;
    pd_str path = {0};
    if (out_path)
        pd_str_append(&path, out_path);
    else
        pd_str_printf(&path, "%s/report.html", run_dir);
    if (page.oom || path.oom || !page.data) {
        snprintf(err, errlen, "out of memory building the report");
        rc = -1;
    } else if (pd_write_file_atomic(path.data, page.data, page.len) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path.data, strerror(errno));
        rc = -1;
    }
    pd_str_free(&path);
    pd_str_free(&page);
    return rc;
}
