/* The first screen of the report: what the run was, its best executions
 * per benchmark metric with the command that produced them, and how much
 * each swept variable moves each metric. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "report/svg.h"

#define BEST_N 5        /* executions listed per metric */
#define MAX_METRICS 6   /* metrics in the impact table and the box plots */
#define MAX_BEST 2      /* metrics with a best-results table (the first screen) */
#define MAX_BOXES 60    /* executions per box plot */

typedef struct {
    const char *id;
    size_t first_row; /* where its variable values are read */
    size_t n;
    double mean, m2;
} exec_acc;

/* Time-like metrics are better low, the rest (bandwidth, rates) high. */
static bool lower_is_better(const char *metric)
{
    const char *u = pd_svg_unit_of(metric);
    static const char *const time_units[] = {"s", "ms", "\xC2\xB5s", "ns"};
    for (size_t i = 0; i < PD_ARRAY_LEN(time_units); i++)
        if (!strcmp(u, time_units[i]))
            return true;
    /* cov, imbalance, error: spreads and misses, better small */
    return strstr(metric, "time") || strstr(metric, "latency") || strstr(metric, "duration") ||
           strstr(metric, "makespan") || !strcmp(metric, "cov") || strstr(metric, "cov_") == metric ||
           strstr(metric, "_cov") || strstr(metric, "imbalance") || strstr(metric, "error") ||
           strstr(metric, "mape");
}

/* Per-execution mean of metric m, executions in first-row order. */
static size_t exec_means(const pd_rep_table *t, size_t m, exec_acc *e)
{
    size_t ne = 0, last = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *id = t->exec_ids[r];
        size_t k = ne;
        if (ne && !strcmp(e[last].id, id)) /* rows of an execution are usually adjacent */
            k = last;
        else
            for (k = 0; k < ne && strcmp(e[k].id, id); k++)
                ;
        if (k == ne)
            e[ne++] = (exec_acc){.id = id, .first_row = r};
        last = k;
        double v = t->vals[r * t->nmetrics + m];
        if (!isfinite(v))
            continue;
        exec_acc *a = &e[k];
        a->n++;
        double d = v - a->mean;
        a->mean += d / (double)a->n;
        a->m2 += d * (v - a->mean);
    }
    return ne;
}

static bool metric_varies(const pd_rep_table *t, size_t m)
{
    double first = NAN;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = t->vals[r * t->nmetrics + m];
        if (!isfinite(v))
            continue;
        if (isfinite(first) && v != first)
            return true;
        first = v;
    }
    return false;
}

/* executions.<id>.command of the run's __iops_index.json (NULL: none). */
static json_t *load_index(const char *run_dir)
{
    pd_str path = {0};
    pd_str_printf(&path, "%s/__iops_index.json", run_dir);
    json_t *root = path.data ? json_load_file(path.data, 0, NULL) : NULL;
    pd_str_free(&path);
    return root;
}

static const char *command_of(json_t *index, const char *id)
{
    json_t *c = json_object_get(json_object_get(json_object_get(index, "executions"), id), "command");
    return json_is_string(c) ? json_string_value(c) : NULL;
}

static bool sort_low; /* qsort has no context argument */

static int cmp_exec(const void *pa, const void *pb)
{
    const exec_acc *a = pa, *b = pb;
    bool fa = a->n > 0, fb = b->n > 0;
    if (fa != fb)
        return fa ? -1 : 1; /* executions without a value last */
    if (a->mean != b->mean)
        return (a->mean < b->mean) == sort_low ? -1 : 1;
    return strcmp(a->id, b->id);
}

static void best_table(pd_page *pg, const pd_rep_table *t, size_t m, json_t *index, exec_acc *e,
                       const size_t *swept, size_t ns)
{
    pd_str *o = pg->out;
    size_t ne = exec_means(t, m, e);
    sort_low = lower_is_better(t->metrics[m]);
    qsort(e, ne, sizeof *e, cmp_exec);
    const char *unit = pd_svg_unit_of(t->metrics[m]);
    pd_str_append(o, "<h3>Best ");
    pd_html_escape(o, t->metrics[m]);
    if (unit[0]) {
        pd_str_append(o, " [");
        pd_html_escape(o, unit);
        pd_str_append(o, "]");
    }
    pd_str_printf(o, " <small>(%s mean first)</small></h3>\n", sort_low ? "lowest" : "highest");
    pd_str_printf(o, "<table class=\"pd-table pd-best\" data-metric=\"");
    pd_html_escape(o, t->metrics[m]);
    pd_str_append(o, "\"><thead><tr><th>#</th><th>execution</th><th>variables</th><th>mean</th><th>sd / mean</th>"
                     "<th>n</th><th>command</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < ne && i < BEST_N && e[i].n; i++) {
        char bm[48], bs[48] = "";
        pd_svg_fmt(bm, sizeof bm, e[i].mean, 0);
        /* relative: 1.3 % reads at once where 1.566e-06 s does not */
        if (e[i].n > 1 && e[i].mean != 0)
            snprintf(bs, sizeof bs, "%.1f%%", 100 * sqrt(e[i].m2 / (double)(e[i].n - 1)) / fabs(e[i].mean));
        pd_str_printf(o, "<tr><td class=\"pd-num\">%zu</td><td>", i + 1);
        pd_html_escape(o, e[i].id);
        pd_str_append(o, "</td><td>");
        for (size_t k = 0; k < ns; k++) { /* swept ones only: the rest is the same in every row */
            pd_str_append(o, k ? ", " : "");
            pd_html_escape(o, t->vars[swept[k]]);
            pd_str_append(o, "=");
            pd_html_escape(o, t->var_vals[e[i].first_row * t->nvars + swept[k]]);
        }
        pd_str_printf(o, "</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%zu</td>"
                         "<td class=\"pd-cmdcell\">",
                      bm, bs, e[i].n);
        const char *cmd = command_of(index, e[i].id);
        if (cmd) {
            pd_str_append(o, "<code class=\"pd-cmd\">");
            pd_html_escape(o, cmd);
            pd_str_append(o, "</code>");
        } else {
            pd_str_append(o, "n/a");
        }
        pd_str_append(o, "</td></tr>\n");
    }
    pd_str_append(o, "</tbody></table>\n");
}

/* Spread of the per-value means of metric m over variable v, relative to
 * the overall mean (NaN when it cannot be said). */
static double impact(const pd_rep_table *t, size_t m, size_t v)
{
    char **vals = NULL;
    bool numeric;
    size_t nv = pd_rep_distinct(t, v, &vals, &numeric);
    double *sum = calloc(nv + 1, sizeof *sum), *cnt = calloc(nv + 1, sizeof *cnt), all = 0, nall = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = 0; sum && cnt && r < t->nrows; r++) {
        double x = t->vals[r * t->nmetrics + m];
        if (!isfinite(x))
            continue;
        for (size_t i = 0; i < nv; i++)
            if (!strcmp(vals[i], t->var_vals[r * t->nvars + v])) {
                sum[i] += x;
                cnt[i]++;
                break;
            }
        all += x;
        nall++;
    }
    for (size_t i = 0; sum && cnt && i < nv; i++)
        if (cnt[i] > 0) {
            lo = fmin(lo, sum[i] / cnt[i]);
            hi = fmax(hi, sum[i] / cnt[i]);
        }
    free(sum);
    free(cnt);
    pd_rep_names_free(vals);
    double mean = nall > 0 ? all / nall : NAN;
    if (!(hi >= lo) || !isfinite(mean) || mean == 0)
        return NAN;
    return (hi - lo) / fabs(mean);
}

static void impact_table(pd_page *pg, const pd_rep_table *t, const size_t *metrics, size_t nm, const size_t *swept,
                         size_t ns)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<h3>Variable impact</h3>\n<table class=\"pd-table pd-impact\"><thead><tr><th>metric</th>");
    for (size_t i = 0; i < ns; i++) {
        pd_str_append(o, "<th>");
        pd_html_escape(o, t->vars[swept[i]]);
        pd_str_append(o, "</th>");
    }
    pd_str_append(o, "</tr></thead><tbody>\n");
    for (size_t k = 0; k < nm; k++) {
        pd_str_append(o, "<tr><td>");
        pd_html_escape(o, t->metrics[metrics[k]]);
        pd_str_append(o, "</td>");
        for (size_t i = 0; i < ns; i++) {
            double x = impact(t, metrics[k], swept[i]);
            if (!isfinite(x)) {
                pd_str_append(o, "<td class=\"pd-num\">n/a</td>");
                continue;
            }
            /* the bar saturates at 100 % (a metric that doubles or more) */
            double w = fmin(x, 1.0) * 60;
            pd_str_printf(o,
                          "<td class=\"pd-num\"><span class=\"pd-impact-bar\" style=\"width:%.0fpx\"></span>%.0f%%"
                          "</td>",
                          w, x * 100);
        }
        pd_str_append(o, "</tr>\n");
    }
    pd_str_append(o, "</tbody></table>\n");
    pd_page_note(pg, "", "Impact: how far the mean of a metric moves between the values of a variable (the "
                         "other variables averaged over), as a share of its overall mean.");
}

/* One box plot of metric m: the repetitions of each execution. */
static void box_chart(pd_page *pg, const pd_rep_table *t, size_t m, exec_acc *e)
{
    size_t ne = exec_means(t, m, e), nb = ne < MAX_BOXES ? ne : MAX_BOXES;
    const char **labels = calloc(nb + 1, sizeof *labels);
    double **vals = calloc(nb + 1, sizeof *vals);
    size_t *nvals = calloc(nb + 1, sizeof *nvals), reps_max = 0;
    for (size_t i = 0; labels && vals && nvals && i < nb; i++) {
        /* exec_0001 -> 0001: the full id would not fit under a box */
        labels[i] = strncmp(e[i].id, "exec_", 5) ? e[i].id : e[i].id + 5;
        vals[i] = calloc(t->nrows + 1, sizeof **vals);
        for (size_t r = 0; vals[i] && r < t->nrows; r++)
            if (!strcmp(t->exec_ids[r], e[i].id))
                vals[i][nvals[i]++] = t->vals[r * t->nmetrics + m];
        reps_max = nvals[i] > reps_max ? nvals[i] : reps_max;
    }
    if (labels && vals && nvals) {
        pd_str title = {0}, ylabel = {0}, cap = {0};
        const char *unit = pd_svg_unit_of(t->metrics[m]);
        pd_str_printf(&title, "%s per execution", t->metrics[m]);
        pd_str_append(&ylabel, t->metrics[m]);
        if (unit[0])
            pd_str_printf(&ylabel, " [%s]", unit);
        pd_svg_boxes b = {.metric = t->metrics[m], .title = title.data, .xlabel = "execution (exec_NNNN)",
                          .ylabel = ylabel.data, .labels = labels, .n = nb,
                          .vals = (const double *const *)vals, .nvals = nvals};
        pd_page_fig_open(pg);
        pd_svg_box_chart(pg->out, &b);
        pd_str_printf(&cap, "Every repetition (up to %zu per execution) as a point; box: quartiles, red: median, "
                            "whiskers: min and max.",
                      reps_max);
        if (ne > nb)
            pd_str_printf(&cap, " First %d of %zu executions.", MAX_BOXES, ne);
        pd_page_fig_close(pg, cap.data);
        pd_str_free(&title);
        pd_str_free(&ylabel);
        pd_str_free(&cap);
    }
    for (size_t i = 0; vals && i < nb; i++)
        free(vals[i]);
    free(labels);
    free(vals);
    free(nvals);
}

/* Parallel coordinates of metric m's execution means over the swept
 * variables (worth it from 3 variables on, where heatmaps need pairs). */
static void parcoords(pd_page *pg, const pd_rep_table *t, size_t m, const size_t *swept, size_t ns, exec_acc *e)
{
    size_t ne = exec_means(t, m, e), na = ns + 1;
    pd_svg_pc_axis *axes = calloc(na, sizeof *axes);
    char ***vals = calloc(ns + 1, sizeof *vals);
    double **tpos = calloc(na, sizeof *tpos), *pos = calloc(ne * na + 1, sizeof *pos);
    char **tips = calloc(ne + 1, sizeof *tips), mlab[32][48];
    const char *mlabp[32];
    double mt[32], step, lo = INFINITY, hi = -INFINITY;
    size_t *nvals = calloc(ns + 1, sizeof *nvals);
    if (!axes || !vals || !tpos || !pos || !tips || !nvals)
        goto out;
    for (size_t a = 0; a < ns; a++) {
        bool numeric;
        nvals[a] = pd_rep_distinct(t, swept[a], &vals[a], &numeric);
        tpos[a] = calloc(nvals[a] + 1, sizeof **tpos);
        if (!tpos[a])
            goto out;
        for (size_t k = 0; k < nvals[a]; k++)
            tpos[a][k] = nvals[a] > 1 ? (double)k / (double)(nvals[a] - 1) : 0.5;
        axes[a] = (pd_svg_pc_axis){.name = t->vars[swept[a]], .nticks = nvals[a],
                                   .tick_labels = (const char *const *)vals[a], .tick_pos = tpos[a]};
    }
    for (size_t i = 0; i < ne; i++)
        if (e[i].n) {
            lo = fmin(lo, e[i].mean);
            hi = fmax(hi, e[i].mean);
        }
    size_t nt = pd_svg_nice_ticks(lo, hi, 5, mt, 32, &step);
    double tlo = nt ? mt[0] : lo, thi = nt ? mt[nt - 1] : hi;
    if (!(thi > tlo))
        thi = tlo + 1;
    tpos[ns] = calloc(nt + 1, sizeof **tpos);
    if (!tpos[ns])
        goto out;
    for (size_t k = 0; k < nt; k++) {
        pd_svg_fmt_tick(mlab[k], sizeof mlab[k], mt[k], step);
        mlabp[k] = mlab[k];
        tpos[ns][k] = (mt[k] - tlo) / (thi - tlo);
    }
    axes[ns] = (pd_svg_pc_axis){.name = t->metrics[m], .nticks = nt, .tick_labels = mlabp, .tick_pos = tpos[ns]};
    for (size_t i = 0; i < ne; i++) {
        pd_str tip = {0};
        pd_str_printf(&tip, "%s:", e[i].id);
        for (size_t a = 0; a < ns; a++) {
            const char *v = t->var_vals[e[i].first_row * t->nvars + swept[a]];
            pos[i * na + a] = NAN;
            for (size_t k = 0; k < nvals[a]; k++)
                if (!strcmp(vals[a][k], v))
                    pos[i * na + a] = tpos[a][k];
            pd_str_printf(&tip, "%s %s=%s", a ? "," : "", t->vars[swept[a]], v);
        }
        char bm[48];
        pd_svg_fmt(bm, sizeof bm, e[i].mean, 0);
        pos[i * na + ns] = e[i].n ? (e[i].mean - tlo) / (thi - tlo) : NAN;
        pd_str_printf(&tip, " \xE2\x86\x92 %s", e[i].n ? bm : "n/a");
        tips[i] = pd_str_take(&tip);
    }
    pd_str title = {0};
    pd_str_printf(&title, "%s over %zu variables", t->metrics[m], ns);
    pd_svg_pc c = {.metric = t->metrics[m], .title = title.data, .axes = axes, .naxes = na, .nrows = ne,
                   .pos = pos, .tips = (const char *const *)tips, .data_lo = lo, .axis_lo = tlo};
    pd_page_fig_open(pg);
    pd_svg_parcoords_chart(pg->out, &c);
    pd_page_fig_close(pg, "One line per execution through its variable values to its mean; colour: the mean "
                          "(viridis, yellow highest).");
    pd_str_free(&title);
out:
    for (size_t a = 0; vals && a < ns; a++)
        pd_rep_names_free(vals[a]);
    for (size_t a = 0; tpos && a < na; a++)
        free(tpos[a]);
    for (size_t i = 0; tips && i < ne; i++)
        free(tips[i]);
    free(axes);
    free(vals);
    free(tpos);
    free(pos);
    free(tips);
    free(nvals);
}

void pd_page_section_summary(pd_page *pg)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<section id=\"pd-summary\"><h2>Summary</h2>\n");
    size_t reps = 0, ok = 0, failed = 0;
    for (size_t i = 0; i < pg->run.nexecs; i++) {
        reps += pg->run.execs[i].nreps;
        ok += pg->run.execs[i].n_succeeded;
        failed += pg->run.execs[i].n_failed;
    }
    pd_str_printf(o, "<p class=\"pd-meta\">%zu executions, %zu repetitions: %zu succeeded, %zu failed.", pg->run.nexecs,
                  reps, ok, failed);
    if (!pg->have_results) {
        pd_str_append(o, "</p>\n");
        pd_page_note(pg, "pd-missing", "No results.csv: no best results or variable impact.");
        pd_str_append(o, "</section>\n");
        return;
    }
    const pd_rep_table *t = &pg->results;
    size_t *swept = calloc(t->nvars + 1, sizeof *swept), ns = 0;
    long *derived = calloc(t->nvars + 1, sizeof *derived);
    size_t *metrics = calloc(t->nmetrics + 1, sizeof *metrics), nm = 0;
    exec_acc *e = calloc(t->nrows + 1, sizeof *e);
    json_t *index = load_index(pg->run_dir);
    if (!swept || !derived || !metrics || !e)
        goto out;
    ns = pd_page_swept_vars(t, swept, derived);
    if (ns) {
        pd_str_append(o, " Swept: ");
        for (size_t i = 0; i < ns; i++) {
            char **vals = NULL;
            bool numeric;
            size_t nv = pd_rep_distinct(t, swept[i], &vals, &numeric);
            pd_str_append(o, i ? ", <code>" : "<code>");
            pd_html_escape(o, t->vars[swept[i]]);
            pd_str_printf(o, "</code> (%zu values)", nv);
            pd_rep_names_free(vals);
        }
        pd_str_append(o, ".");
    }
    pd_str_append(o, "</p>\n");
    for (size_t m = 0; m < t->nmetrics && nm < MAX_METRICS; m++)
        if (metric_varies(t, m))
            metrics[nm++] = m;
    for (size_t k = 0; k < nm && k < MAX_BEST; k++)
        best_table(pg, t, metrics[k], index, e, swept, ns);
    if (nm > MAX_BEST)
        pd_page_note(pg, "", "Best results of the first %d varying metrics; all %zu are in the impact table "
                             "and the box plots below, and every metric in the Results section.",
                     MAX_BEST, nm);
    if (nm && ns)
        impact_table(pg, t, metrics, nm, swept, ns);
    if (nm && ns >= 3) {
        pd_str_append(o, "<h3>Parallel coordinates</h3>\n<div class=\"pd-grid\">\n");
        for (size_t k = 0; k < nm && k < 2; k++)
            parcoords(pg, t, metrics[k], swept, ns, e);
        pd_str_append(o, "</div>\n");
    }
    if (nm) {
        pd_str_append(o, "<h3>Repetitions</h3>\n<div class=\"pd-grid\">\n");
        for (size_t k = 0; k < nm; k++)
            box_chart(pg, t, metrics[k], e);
        pd_str_append(o, "</div>\n");
    }
    if (!nm)
        pd_page_note(pg, "", "No benchmark metric varies over the run: nothing to rank.");
out:
    json_decref(index);
    free(swept);
    free(derived);
    free(metrics);
    free(e);
    pd_str_append(o, "</section>\n");
}
