/* Per-variable plots (mean +/- stddev over repetitions) of results.csv and
 * summary metrics, and heatmaps of two swept variables against a metric. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/page.h"
#include "report/svg.h"

#define MAX_SERIES 8 /* a second variable with more values is aggregated */

/* Resource metrics worth a heatmap, in the order they are shown. */
static const char *const heat_resource[] = {"mem_peak_gb",         "cpu_avg_pct",
                                            "io_write_mbs_active", "io_read_mbs_active",
                                            "gpu_energy_j",        "gpu_avg_utilization_pct"};

/* Summary metrics shown up front; the others sit in a folded section. */
static const char *const key_resource[] = {
    "mem_peak_gb",     "mem_avg_gb",       "cpu_avg_pct",         "cpu_max_pct",
    "cpu_imbalance_pct", "gpu_avg_utilization_pct", "gpu_avg_power_w", "gpu_energy_j",
    "gpu_mem_peak_mib", "io_read_gb",      "io_write_gb",         "io_read_mbs_active",
    "io_write_mbs_active"};

/* Sample counters: not worth a plot of their own. */
static const char *const counters[] = {"nodes_traced",       "samples_collected", "gpu_count",
                                       "gpu_samples_collected", "io_nodes_traced", "io_samples_collected"};

typedef struct {
    char **vals;
    size_t n;
    bool numeric;
    double *num;
} var_dom;

/* A table with each variable's domain and each row's value index. */
typedef struct {
    const pd_rep_table *t;
    var_dom *dom;
    size_t *swept, nswept;
    size_t *vidx;     /* [row * nvars + v] */
    long *derived_of; /* [v]: the swept variable v follows, or -1 */
} tview;

/* Whether every value of u comes with a single value of v in t's rows. */
static bool follows(const tview *tv, size_t v, size_t u)
{
    size_t nv = tv->t->nvars, *seen = malloc((tv->dom[u].n + 1) * sizeof *seen);
    if (!seen)
        return false;
    for (size_t i = 0; i < tv->dom[u].n; i++)
        seen[i] = SIZE_MAX;
    bool ok = true;
    for (size_t r = 0; ok && r < tv->t->nrows; r++) {
        size_t iu = tv->vidx[r * nv + u], iv = tv->vidx[r * nv + v];
        if (seen[iu] == SIZE_MAX)
            seen[iu] = iv;
        ok = seen[iu] == iv;
    }
    free(seen);
    return ok;
}

/* A derived variable (elements = size_mib * 2^20 / 24) follows another swept
 * one: plotted against, it repeats that one's charts with odd ticks, and as
 * a heatmap axis it leaves most cells empty. It is dropped from the swept
 * variables; of two that follow each other, the later one goes. */
static void drop_derived(tview *tv)
{
    size_t kept = 0;
    for (size_t i = 0; i < tv->nswept; i++) {
        size_t v = tv->swept[i];
        tv->derived_of[v] = -1;
        for (size_t j = 0; j < tv->nswept && tv->derived_of[v] < 0; j++) {
            size_t u = tv->swept[j];
            if (u == v || (j > i && follows(tv, u, v)) || !follows(tv, v, u))
                continue;
            if (j < i && tv->derived_of[u] >= 0)
                continue; /* u itself was dropped */
            tv->derived_of[v] = (long)u;
        }
        if (tv->derived_of[v] < 0)
            tv->swept[kept++] = v;
    }
    tv->nswept = kept;
}

static void tview_init(tview *tv, const pd_rep_table *t)
{
    *tv = (tview){.t = t};
    size_t nv = t->nvars;
    tv->dom = calloc(nv ? nv : 1, sizeof *tv->dom);
    tv->swept = calloc(nv ? nv : 1, sizeof *tv->swept);
    tv->vidx = calloc(t->nrows * nv + 1, sizeof *tv->vidx);
    tv->derived_of = calloc(nv ? nv : 1, sizeof *tv->derived_of);
    if (!tv->dom || !tv->swept || !tv->vidx || !tv->derived_of)
        return;
    for (size_t v = 0; v < nv; v++)
        tv->derived_of[v] = -1;
    for (size_t v = 0; v < nv; v++) {
        var_dom *d = &tv->dom[v];
        d->n = pd_rep_distinct(t, v, &d->vals, &d->numeric);
        d->num = calloc(d->n ? d->n : 1, sizeof *d->num);
        for (size_t i = 0; d->num && i < d->n; i++)
            d->num[i] = d->numeric ? strtod(d->vals[i], NULL) : (double)i;
        if (d->n >= 2)
            tv->swept[tv->nswept++] = v;
        for (size_t r = 0; r < t->nrows; r++)
            for (size_t i = 0; i < d->n; i++)
                if (!strcmp(d->vals[i], t->var_vals[r * nv + v])) {
                    tv->vidx[r * nv + v] = i;
                    break;
                }
    }
    drop_derived(tv);
}

static void tview_free(tview *tv)
{
    for (size_t v = 0; tv->dom && v < tv->t->nvars; v++) {
        pd_rep_names_free(tv->dom[v].vals);
        free(tv->dom[v].num);
    }
    free(tv->dom);
    free(tv->swept);
    free(tv->vidx);
    free(tv->derived_of);
}

size_t pd_page_swept_vars(const pd_rep_table *t, size_t *swept, long *derived_of)
{
    tview tv;
    tview_init(&tv, t);
    size_t n = 0;
    if (tv.dom && tv.swept && tv.vidx && tv.derived_of) {
        n = tv.nswept;
        memcpy(swept, tv.swept, n * sizeof *swept);
        memcpy(derived_of, tv.derived_of, t->nvars * sizeof *derived_of);
    }
    tview_free(&tv);
    return n;
}

static bool in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], s))
            return true;
    return false;
}

/* gpuN_* or <host>_gpuN_*: per-GPU columns, shown through the aggregates. */
static bool per_gpu_column(const char *m)
{
    for (const char *p = strstr(m, "gpu"); p; p = strstr(p + 1, "gpu")) {
        if (p != m && p[-1] != '_')
            continue;
        const char *q = p + 3;
        if (*q < '0' || *q > '9')
            continue;
        while (*q >= '0' && *q <= '9')
            q++;
        if (*q == '_')
            return true;
    }
    return false;
}

/* Finite values of metric m all equal (or none): *value gets it (NaN). */
static bool metric_constant(const pd_rep_table *t, size_t m, double *value)
{
    *value = NAN;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = t->vals[r * t->nmetrics + m];
        if (!isfinite(v))
            continue;
        if (isfinite(*value) && v != *value)
            return false;
        *value = v;
    }
    return true;
}

/* Whether log spacing describes the swept values better (1,2,4,8,...). */
static bool use_log_axis(const double *v, size_t n)
{
    if (n < 3 || v[0] <= 0 || v[n - 1] / v[0] < 8)
        return false;
    double ml = 0, mg = 0, sl = 0, sg = 0;
    for (size_t i = 1; i < n; i++) {
        ml += v[i] - v[i - 1];
        mg += log10(v[i] / v[i - 1]);
    }
    ml /= (double)(n - 1);
    mg /= (double)(n - 1);
    for (size_t i = 1; i < n; i++) {
        double a = v[i] - v[i - 1] - ml, b = log10(v[i] / v[i - 1]) - mg;
        sl += a * a;
        sg += b * b;
    }
    return sqrt(sg) / mg + 0.05 < sqrt(sl) / ml;
}

/* Welford accumulator: deterministic, stable mean and sample stddev. */
typedef struct {
    size_t n;
    double mean, m2;
} acc;

static void acc_add(acc *a, double v)
{
    a->n++;
    double d = v - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (v - a->mean);
}

static void ylabel_of(pd_str *s, const char *metric, const char *suffix)
{
    const char *unit = pd_svg_unit_of(metric);
    pd_str_append(s, metric);
    if (unit[0])
        pd_str_printf(s, " [%s]", unit);
    if (suffix)
        pd_str_append(s, suffix);
}

/* The variable lines are split by: the first other swept one with few values. */
static long series_var(const tview *tv, size_t v)
{
    for (size_t i = 0; i < tv->nswept; i++) {
        size_t s = tv->swept[i];
        if (s != v && tv->dom[s].n <= MAX_SERIES)
            return (long)s;
    }
    return -1;
}

static void var_chart(pd_page *pg, const tview *tv, size_t m, size_t v)
{
    const pd_rep_table *t = tv->t;
    const var_dom *xd = &tv->dom[v];
    long sv = series_var(tv, v);
    size_t nser = sv >= 0 ? tv->dom[sv].n : 1, nx = xd->n;
    acc *a = calloc(nser * nx, sizeof *a);
    double *buf = calloc(nser * nx * 3 + 1, sizeof *buf);
    size_t *cnt = calloc(nser * nx + 1, sizeof *cnt);
    pd_svg_series *ser = calloc(nser, sizeof *ser);
    if (!a || !buf || !cnt || !ser)
        goto out;
    for (size_t r = 0; r < t->nrows; r++) {
        double val = t->vals[r * t->nmetrics + m];
        if (!isfinite(val))
            continue;
        size_t xi = tv->vidx[r * t->nvars + v], si = sv >= 0 ? tv->vidx[r * t->nvars + (size_t)sv] : 0;
        acc_add(&a[si * nx + xi], val);
    }
    size_t nmin = SIZE_MAX, nmax = 0;
    for (size_t s = 0; s < nser; s++) {
        double *y = buf + s * nx * 3, *e = y + nx, *x = e + nx;
        for (size_t i = 0; i < nx; i++) {
            const acc *c = &a[s * nx + i];
            x[i] = xd->num[i];
            y[i] = c->n ? c->mean : NAN;
            e[i] = c->n > 1 ? sqrt(c->m2 / (double)(c->n - 1)) : 0;
            cnt[s * nx + i] = c->n;
            if (c->n) {
                nmin = c->n < nmin ? c->n : nmin;
                nmax = c->n > nmax ? c->n : nmax;
            }
        }
        ser[s] = (pd_svg_series){.name = sv >= 0 ? tv->dom[sv].vals[s] : "", .n = nx, .x = x, .y = y,
                                 .err = e, .count = cnt + s * nx};
    }
    pd_str title = {0}, ylabel = {0}, cap = {0}, sname = {0};
    pd_str_printf(&title, "%s vs %s", t->metrics[m], t->vars[v]);
    ylabel_of(&ylabel, t->metrics[m], NULL);
    /* series names say which variable they are */
    char **names = NULL;
    if (sv >= 0) {
        names = calloc(nser, sizeof *names);
        for (size_t s = 0; names && s < nser; s++) {
            pd_str_clear(&sname);
            pd_str_printf(&sname, "%s=%s", t->vars[sv], tv->dom[sv].vals[s]);
            names[s] = pd_str_take(&sname);
            ser[s].name = names[s] ? names[s] : "";
        }
    }
    bool xlog = xd->numeric && use_log_axis(xd->num, nx);
    pd_svg_xy c = {.kind = "pd-line", .metric = t->metrics[m], .var = t->vars[v],
                   .title = title.data, .xlabel = t->vars[v], .ylabel = ylabel.data,
                   .xcats = xd->numeric ? NULL : (const char *const *)xd->vals,
                   .nxcats = xd->numeric ? 0 : nx, .xlog = xlog,
                   .xticks = xd->numeric ? xd->num : NULL, .nxticks = xd->numeric ? nx : 0,
                   .markers = true, .series = ser, .nseries = nser};
    pd_page_fig_open(pg);
    pd_svg_xy_chart(pg->out, &c);
    if (nmax == 0)
        pd_str_append(&cap, "No values.");
    else if (nmin == nmax)
        pd_str_printf(&cap, "Mean \xC2\xB1 sample stddev of %zu row%s per point", nmax, nmax > 1 ? "s" : "");
    else
        pd_str_printf(&cap, "Mean \xC2\xB1 sample stddev of %zu to %zu rows per point", nmin, nmax);
    if (sv >= 0)
        pd_str_printf(&cap, "; one line per value of %s", t->vars[sv]);
    size_t others = 0;
    for (size_t i = 0; i < tv->nswept; i++)
        if (tv->swept[i] != v && (long)tv->swept[i] != sv)
            pd_str_printf(&cap, "%s%s", others++ ? ", " : "; aggregated over ", t->vars[tv->swept[i]]);
    if (xlog)
        pd_str_append(&cap, "; log x axis");
    pd_str_append(&cap, ".");
    pd_page_fig_close(pg, cap.data);
    if (names)
        for (size_t s = 0; s < nser; s++)
            free(names[s]);
    free(names);
    pd_str_free(&title);
    pd_str_free(&ylabel);
    pd_str_free(&cap);
    pd_str_free(&sname);
out:
    free(a);
    free(buf);
    free(cnt);
    free(ser);
}

/* Stats table of the whole run when there is no variable to plot against. */
static void stats_table(pd_page *pg, const pd_rep_table *t, const bool *plot)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<table class=\"pd-table pd-stats\"><thead><tr><th>metric</th><th>unit</th><th>mean</th>"
                     "<th>sd</th><th>n</th></tr></thead><tbody>\n");
    double *col = calloc(t->nrows + 1, sizeof *col);
    for (size_t m = 0; col && m < t->nmetrics; m++) {
        if (!plot[m])
            continue;
        for (size_t r = 0; r < t->nrows; r++)
            col[r] = t->vals[r * t->nmetrics + m];
        double mean, sd;
        size_t n = pd_rep_mean_sd(col, t->nrows, &mean, &sd);
        char bm[48], bs[48];
        pd_svg_fmt(bm, sizeof bm, mean, 0);
        pd_svg_fmt(bs, sizeof bs, sd, 0);
        pd_str_append(o, "<tr><td>");
        pd_html_escape(o, t->metrics[m]);
        pd_str_append(o, "</td><td>");
        pd_html_escape(o, pd_svg_unit_of(t->metrics[m]));
        pd_str_printf(o, "</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%zu</td></tr>\n",
                      bm, bs, n);
    }
    free(col);
    pd_str_append(o, "</tbody></table>\n");
}

/* One metric: a heading and its chart against each swept variable. */
static void metric_group(pd_page *pg, const tview *tv, size_t m)
{
    pd_str *o = pg->out;
    const pd_rep_table *t = tv->t;
    pd_str_append(o, "<h3 class=\"pd-metric\">");
    pd_html_escape(o, t->metrics[m]);
    const char *unit = pd_svg_unit_of(t->metrics[m]);
    if (unit[0]) {
        pd_str_append(o, " [");
        pd_html_escape(o, unit);
        pd_str_append(o, "]");
    }
    pd_str_append(o, "</h3>\n<div class=\"pd-grid\">\n");
    for (size_t i = 0; i < tv->nswept; i++)
        var_chart(pg, tv, m, tv->swept[i]);
    pd_str_append(o, "</div>\n");
}

/* Which metrics of t get plots; constant ones are listed in a note. */
static void choose_metrics(pd_page *pg, const pd_rep_table *t, bool summary, bool *plot)
{
    pd_str consts = {0}, gpus = {0};
    size_t nconst = 0, ngpu = 0;
    for (size_t m = 0; m < t->nmetrics; m++) {
        const char *name = t->metrics[m];
        double value;
        plot[m] = false;
        if (summary && (in_list(counters, PD_ARRAY_LEN(counters), name) ||
                        (pg->have_results && pd_rep_table_metric(&pg->results, name) >= 0)))
            continue;
        if (summary && per_gpu_column(name)) {
            if (ngpu++ < 6)
                pd_str_printf(&gpus, "%s%s", ngpu > 1 ? ", " : "", name);
            continue;
        }
        if (metric_constant(t, m, &value)) {
            char b[48];
            pd_svg_fmt(b, sizeof b, value, 0);
            pd_str_printf(&consts, "%s%s = %s", nconst++ ? ", " : "", name, b);
            continue;
        }
        plot[m] = true;
    }
    if (nconst)
        pd_page_note(pg, "", "Constant over the whole run (not plotted): %s.", consts.data);
    if (ngpu)
        pd_page_note(pg, "", "%zu per-GPU columns (%s%s) are in the CSV; the plots use the aggregates.", ngpu,
                     gpus.data, ngpu > 6 ? ", ..." : "");
    if (t->nskipped) {
        pd_str list = {0};
        for (size_t i = 0; i < t->nskipped; i++)
            pd_str_printf(&list, "%s%s", i ? ", " : "", t->skipped[i]);
        pd_page_note(pg, "", "Non-numeric columns (not plotted): %s.", list.data ? list.data : "");
        pd_str_free(&list);
    }
    pd_str_free(&consts);
    pd_str_free(&gpus);
}

static void metrics_section(pd_page *pg, const pd_rep_table *t, bool summary)
{
    pd_str *o = pg->out;
    tview tv;
    tview_init(&tv, t);
    bool *plot = calloc(t->nmetrics + 1, sizeof *plot);
    if (!tv.dom || !tv.swept || !tv.vidx || !tv.derived_of || !plot)
        goto out;
    pd_str_printf(o, "<p class=\"pd-meta\">%zu row%s, %zu numeric metric%s.</p>\n", t->nrows,
                  t->nrows == 1 ? "" : "s", t->nmetrics, t->nmetrics == 1 ? "" : "s");
    choose_metrics(pg, t, summary, plot);
    for (size_t v = 0; v < t->nvars; v++)
        if (tv.derived_of[v] >= 0)
            pd_page_note(pg, "", "Variable %s follows %s (one value of %s for each value of %s): taken as "
                                 "derived, not plotted against.",
                         t->vars[v], t->vars[tv.derived_of[v]], t->vars[v], t->vars[tv.derived_of[v]]);
    for (size_t v = 0; v < t->nvars; v++)
        if (tv.dom[v].n < 2)
            pd_page_note(pg, "", "Variable %s has a single value (%s): nothing to plot against it.", t->vars[v],
                         tv.dom[v].n ? tv.dom[v].vals[0] : "none");
    if (tv.nswept == 0) {
        pd_page_note(pg, "", "No swept variable (none takes two values): whole-run statistics instead.");
        stats_table(pg, t, plot);
        goto out;
    }
    /* the summary's headline metrics first; the rest folded away */
    size_t nmore = 0;
    for (size_t m = 0; m < t->nmetrics; m++) {
        if (!plot[m])
            continue;
        if (summary && !in_list(key_resource, PD_ARRAY_LEN(key_resource), t->metrics[m])) {
            nmore++;
            continue;
        }
        metric_group(pg, &tv, m);
    }
    if (nmore) {
        pd_str_printf(o, "<details class=\"pd-more\"><summary>%zu more resource metrics</summary>\n", nmore);
        for (size_t m = 0; m < t->nmetrics; m++)
            if (plot[m] && !in_list(key_resource, PD_ARRAY_LEN(key_resource), t->metrics[m]))
                metric_group(pg, &tv, m);
        pd_str_append(o, "</details>\n");
    }
out:
    free(plot);
    tview_free(&tv);
}

void pd_page_section_plots(pd_page *pg)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<section id=\"pd-results\"><h2>Benchmark metrics (results.csv)</h2>\n");
    if (pg->have_results)
        metrics_section(pg, &pg->results, false);
    else
        pd_page_note(pg, "pd-missing", "results.csv could not be read (%s): no benchmark metric plots.",
                     pg->results_err);
    pd_str_append(o, "</section>\n<section id=\"pd-resources\"><h2>Resource metrics "
                     "(__iops_resource_summary.csv)</h2>\n");
    if (pg->have_summary)
        metrics_section(pg, &pg->summary, true);
    else
        pd_page_note(pg, "pd-missing",
                     "__iops_resource_summary.csv could not be read (%s): no resource metric plots or "
                     "resource heatmaps (was resource sampling enabled?).",
                     pg->summary_err);
    pd_str_append(o, "</section>\n");
}

static void heatmap(pd_page *pg, const tview *tv, size_t m, size_t xv, size_t yv)
{
    const pd_rep_table *t = tv->t;
    const var_dom *xd = &tv->dom[xv], *yd = &tv->dom[yv];
    size_t nx = xd->n, ny = yd->n;
    acc *a = calloc(nx * ny, sizeof *a);
    double *v = calloc(nx * ny, sizeof *v);
    if (!a || !v)
        goto out;
    for (size_t r = 0; r < t->nrows; r++) {
        double val = t->vals[r * t->nmetrics + m];
        if (isfinite(val))
            acc_add(&a[tv->vidx[r * t->nvars + yv] * nx + tv->vidx[r * t->nvars + xv]], val);
    }
    size_t missing = 0;
    for (size_t i = 0; i < nx * ny; i++) {
        v[i] = a[i].n ? a[i].mean : NAN;
        missing += a[i].n == 0;
    }
    pd_str title = {0}, cap = {0};
    pd_str_printf(&title, "%s by %s \xC3\x97 %s", t->metrics[m], t->vars[xv], t->vars[yv]);
    pd_svg_heatmap h = {.metric = t->metrics[m], .title = title.data, .xlabel = t->vars[xv],
                        .ylabel = t->vars[yv], .unit = pd_svg_unit_of(t->metrics[m]),
                        .xcats = (const char *const *)xd->vals, .nx = nx,
                        .ycats = (const char *const *)yd->vals, .ny = ny, .v = v};
    pd_page_fig_open(pg);
    pd_svg_heatmap_chart(pg->out, &h);
    pd_str_append(&cap, "Mean over repetitions");
    size_t others = 0;
    for (size_t i = 0; i < tv->nswept; i++)
        if (tv->swept[i] != xv && tv->swept[i] != yv)
            pd_str_printf(&cap, "%s%s", others++ ? ", " : " and over ", t->vars[tv->swept[i]]);
    if (missing)
        pd_str_printf(&cap, "; %zu grey cell%s without data", missing, missing > 1 ? "s" : "");
    pd_str_append(&cap, ".");
    pd_page_fig_close(pg, cap.data);
    pd_str_free(&title);
    pd_str_free(&cap);
out:
    free(a);
    free(v);
}

/* Heatmaps of every pair of swept variables for the metrics of one table. */
static size_t heatmaps_of(pd_page *pg, const pd_rep_table *t, bool summary)
{
    tview tv;
    tview_init(&tv, t);
    size_t drawn = 0;
    if (!tv.dom || !tv.swept || !tv.vidx || !tv.derived_of || tv.nswept < 2)
        goto out;
    size_t *pick = calloc(t->nmetrics + 1, sizeof *pick), np = 0;
    if (!pick)
        goto out;
    if (summary) {
        for (size_t k = 0; k < PD_ARRAY_LEN(heat_resource); k++) {
            int m = pd_rep_table_metric(t, heat_resource[k]);
            double c;
            if (m >= 0 && !metric_constant(t, (size_t)m, &c))
                pick[np++] = (size_t)m;
        }
    } else {
        for (size_t m = 0; m < t->nmetrics; m++) {
            double c;
            if (!metric_constant(t, m, &c))
                pick[np++] = m;
        }
    }
    size_t pairs = 0;
    for (size_t i = 0; i < tv.nswept; i++)
        for (size_t j = i + 1; j < tv.nswept; j++) {
            size_t xv = tv.swept[i], yv = tv.swept[j];
            if (tv.dom[xv].n > PD_PAGE_MAX_HEAT_CATS || tv.dom[yv].n > PD_PAGE_MAX_HEAT_CATS ||
                pairs >= PD_PAGE_MAX_HEAT_PAIRS || np == 0)
                continue;
            pairs++;
            pd_str_append(pg->out, "<h3>");
            pd_html_escape(pg->out, t->vars[xv]);
            pd_str_append(pg->out, " \xC3\x97 ");
            pd_html_escape(pg->out, t->vars[yv]);
            pd_str_append(pg->out, summary ? " (resource metrics)" : " (benchmark metrics)");
            pd_str_append(pg->out, "</h3>\n<div class=\"pd-grid\">\n");
            for (size_t k = 0; k < np; k++) {
                heatmap(pg, &tv, pick[k], xv, yv);
                drawn++;
            }
            pd_str_append(pg->out, "</div>\n");
        }
    free(pick);
out:
    tview_free(&tv);
    return drawn;
}

void pd_page_section_heatmaps(pd_page *pg)
{
    pd_str_append(pg->out, "<section id=\"pd-heatmaps\"><h2>Heatmaps</h2>\n");
    size_t drawn = 0;
    if (pg->have_results)
        drawn += heatmaps_of(pg, &pg->results, false);
    if (pg->have_summary)
        drawn += heatmaps_of(pg, &pg->summary, true);
    else
        pd_page_note(pg, "pd-missing", "No __iops_resource_summary.csv: no resource heatmaps.");
    if (!drawn)
        pd_page_note(pg, "", "Heatmaps need two swept variables (each with 2 to %d values) and a metric that "
                             "varies; this run has none.",
                     PD_PAGE_MAX_HEAT_CATS);
    pd_str_append(pg->out, "</section>\n");
}
