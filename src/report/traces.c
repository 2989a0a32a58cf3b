/* Per-execution resource time series from the sampler traces, and per-task
 * time bars of placement studies (paddiser_tasks.csv). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/page.h"
#include "report/svg.h"

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void exec_heading(pd_page *pg, const pd_rep_exec *ex, const char *rep)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<h3 class=\"pd-exec\">");
    pd_html_escape(o, ex->id);
    pd_str_append(o, " / ");
    pd_html_escape(o, rep);
    if (ex->nvars) {
        pd_str_append(o, " <small>(");
        pd_page_exec_vars(pg, ex);
        pd_str_append(o, ")</small>");
    }
    pd_str_append(o, "</h3>\n");
}

/* One time-series chart of a set (its series downsampled as they were
 * loaded, see exec_traces). */
static void ts_chart(pd_page *pg, const pd_rep_tsset *set, double t_end, const char *metric,
                     const char *title, const char *ylabel, const char *live_ylabel, double y_top,
                     const char *caption)
{
    pd_svg_series *ser = calloc(set->n ? set->n : 1, sizeof *ser);
    if (!ser)
        return;
    bool reduced = false;
    for (size_t s = 0; s < set->n; s++) {
        const pd_rep_ts *ts = &set->s[s];
        reduced |= ts->n < ts->n_raw;
        ser[s] = (pd_svg_series){.name = ts->name, .n = ts->n, .x = ts->t, .y = ts->y};
    }
    pd_svg_xy c = {.kind = "pd-ts", .metric = metric, .title = title,
                   .xlabel = "time since first sample [s]", .ylabel = ylabel, .width = 400,
                   .y_zero = true, .y_top = y_top, .series = ser, .nseries = set->n,
                   .x_fixed = true, .x_from = 0, .x_to = t_end};
    pd_page_ts_fig_open(pg, set, t_end, title, c.xlabel, live_ylabel ? live_ylabel : ylabel, y_top);
    pd_svg_xy_chart(pg->out, &c);
    pd_str cap = {0};
    pd_str_append(&cap, caption);
    if (reduced)
        pd_str_printf(&cap, " Downsampled to the min and max of %d time buckets.", PD_PAGE_TS_BUCKETS);
    pd_page_fig_close(pg, cap.data);
    pd_str_free(&cap);
    free(ser);
}

/* What the traces of the shown executions lack, said once for the section
 * instead of under every execution. */
typedef struct {
    bool *short_run, *no_gpu, *no_io; /* [exec] */
    size_t nshort, nno_gpu, nno_io;
} trace_gaps;

/* Draws the time series of one repetition under its heading; returns false
 * (nothing drawn) when no series has two samples: a repetition shorter than
 * the sampling interval would give an empty chart. */
static bool exec_traces(pd_page *pg, const pd_rep_exec *ex, const char *rep, const char *rep_dir,
                        trace_gaps *gaps, size_t ei)
{
    pd_rep_traces tr;
    /* reduced while streaming: memory does not grow with the trace */
    pd_rep_traces_load_reduced(rep_dir, PD_PAGE_TS_BUCKETS, &tr);
    static const struct {
        const char *metric, *title, *ylabel;
        const char *live_ylabel; /* shorter, for uPlot's fixed label room (NULL: ylabel) */
        double y_top;
        const char *caption;
    } charts[] = {
        {"cpu_total_pct", "CPU utilisation", "user + system [%]", NULL, 100,
         "Mean over the cores of each host (one line per host)."},
        {"mem_used_gb", "Memory used", "mem_total \xE2\x88\x92 mem_available [GiB]", "used [GiB]", 0,
         "Per host, from the CPU/memory trace."},
        {"gpu_utilization_pct", "GPU utilisation", "utilization.gpu [%]", NULL, 100,
         "One line per GPU; rows with [N/A] fields are dropped."},
        {"gpu_power_w", "GPU power", "power draw [W]", NULL, 0, "One line per GPU; the area under each line is its energy."},
        {"io_mbs", "I/O throughput", "throughput [MiB/s]", NULL, 0,
         "Per source and direction: bytes of the interval / interval_s, devices of a source summed."},
    };
    const pd_rep_tsset *sets[] = {&tr.cpu, &tr.mem, &tr.gpu_util, &tr.gpu_power, &tr.io};
    /* all charts of a repetition share one time axis */
    double t_end = 0;
    for (size_t k = 0; k < PD_ARRAY_LEN(sets); k++)
        for (size_t i = 0; i < sets[k]->n; i++)
            if (sets[k]->s[i].n)
                t_end = fmax(t_end, sets[k]->s[i].t[sets[k]->s[i].n - 1]);
    bool drawable[PD_ARRAY_LEN(sets)], any = false;
    for (size_t k = 0; k < PD_ARRAY_LEN(sets); k++) {
        drawable[k] = false;
        for (size_t i = 0; t_end > 0 && i < sets[k]->n; i++)
            drawable[k] |= sets[k]->s[i].n >= 2;
        any |= drawable[k];
    }
    bool has_rows = tr.cpu.n || tr.mem.n || tr.gpu_util.n || tr.gpu_power.n || tr.io.n;
    if (!any && has_rows) {
        gaps->short_run[ei] = true;
        gaps->nshort++;
        pd_rep_traces_free(&tr);
        return false;
    }
    exec_heading(pg, ex, rep);
    if (any) {
        pd_str_append(pg->out, "<div class=\"pd-grid\">\n");
        for (size_t k = 0; k < PD_ARRAY_LEN(sets); k++)
            if (drawable[k])
                ts_chart(pg, sets[k], t_end, charts[k].metric, charts[k].title, charts[k].ylabel,
                         charts[k].live_ylabel, charts[k].y_top, charts[k].caption);
        pd_str_append(pg->out, "</div>\n");
    }
    if (tr.ncpu_files && !tr.cpu.n)
        pd_page_note(pg, "pd-missing", "CPU/memory trace files hold no usable rows.");
    if (!tr.ncpu_files)
        pd_page_note(pg, "pd-missing", "No CPU/memory trace (__iops_trace_*.csv) in this repetition.");
    if (!tr.ngpu_files) {
        gaps->no_gpu[ei] = true;
        gaps->nno_gpu++;
    } else if (!tr.gpu_util.n)
        pd_page_note(pg, "pd-missing", "GPU trace files hold no usable rows.");
    if (!tr.nio_files) {
        gaps->no_io[ei] = true;
        gaps->nno_io++;
    } else if (!tr.io.n)
        pd_page_note(pg, "pd-missing", "I/O trace files hold no usable rows.");
    if (tr.nbad_rows)
        pd_page_note(pg, "", "Trace rows skipped as malformed (e.g. [N/A] fields): %zu.", tr.nbad_rows);
    if (tr.problems.len)
        pd_page_note(pg, "pd-missing", "Unreadable trace files: %s", tr.problems.data);
    pd_rep_traces_free(&tr);
    return true;
}

/* Names of up to 12 executions, then a count. */
static void list_execs(pd_str *s, const pd_page *pg, const bool *flag)
{
    size_t n = 0;
    for (size_t i = 0; i < pg->run.nexecs; i++) {
        if (!flag[i])
            continue;
        if (n < 12)
            pd_str_printf(s, "%s%s", n ? ", " : "", pg->run.execs[i].id);
        n++;
    }
    if (n > 12)
        pd_str_printf(s, " and %zu more", n - 12);
}

void pd_page_section_traces(pd_page *pg)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<section id=\"pd-timeseries\"><h2>Resource time series</h2>\n");
    pd_page_note(pg, "", "Per execution, from the first repetition that has trace files.");
    /* the charts go to their own buffer: the note on using them comes first,
     * and only when there are charts */
    pd_str charts = {0};
    pg->out = &charts;
    size_t ne = pg->run.nexecs + 1;
    bool *none = calloc(ne, sizeof *none), *capped = calloc(ne, sizeof *capped);
    trace_gaps gaps = {.short_run = calloc(ne, sizeof(bool)), .no_gpu = calloc(ne, sizeof(bool)),
                       .no_io = calloc(ne, sizeof(bool))};
    size_t shown = 0, nnone = 0, ncapped = 0;
    for (size_t i = 0; none && capped && gaps.short_run && gaps.no_gpu && gaps.no_io && i < pg->run.nexecs; i++) {
        const pd_rep_exec *ex = &pg->run.execs[i];
        bool found = false;
        for (size_t r = 0; r < ex->nreps && !found; r++) {
            pd_str dir = {0};
            pd_str_printf(&dir, "%s/%s/%s", pg->run.exec_root, ex->id, ex->reps[r]);
            if (dir.data && pd_rep_dir_has_traces(dir.data)) {
                found = true;
                if (shown < PD_PAGE_MAX_EXECS_TS) {
                    shown += exec_traces(pg, ex, ex->reps[r], dir.data, &gaps, i);
                } else {
                    capped[i] = true;
                    ncapped++;
                }
            }
            pd_str_free(&dir);
        }
        if (!found) {
            none[i] = true;
            nnone++;
        }
    }
    pg->out = o;
    if (shown && pd_page_live())
        pd_page_note(pg, "", "With JavaScript on: drag across a chart to zoom, Shift+drag (or drag with the middle "
                             "button) to pan, double-click to zoom back out; click a legend entry to hide or show "
                             "its series.");
    else if (shown)
        pd_page_note(pg, "pd-missing", "Static charts: this paddiser was built without uPlot (%s), so there is no "
                                       "zoom, pan or series toggling (docs/report.md).", pd_page_live_missing());
    if (charts.oom)
        o->oom = true;
    else if (charts.len)
        pd_str_appendn(o, charts.data, charts.len);
    pd_str_free(&charts);
    if (pg->run.nexecs == 0)
        pd_page_note(pg, "pd-missing", "No exec_NNNN directories: no traces.");
    else if (shown == 0 && !ncapped && !gaps.nshort)
        pd_page_note(pg, "pd-missing", "No trace files in any repetition (resource, GPU and I/O sampling off?).");
    else if (nnone) {
        pd_str l = {0};
        list_execs(&l, pg, none);
        pd_page_note(pg, "pd-missing", "No trace files in any repetition of %s.", l.data ? l.data : "");
        pd_str_free(&l);
    }
    if (ncapped) {
        pd_str l = {0};
        list_execs(&l, pg, capped);
        pd_page_note(pg, "", "Time series shown for the first %d executions only; not shown: %s.",
                     PD_PAGE_MAX_EXECS_TS, l.data ? l.data : "");
        pd_str_free(&l);
    }
    if (gaps.nshort) {
        pd_str l = {0};
        list_execs(&l, pg, gaps.short_run);
        pd_page_note(pg, "", "No time series for %s: the first traced repetition ended before a second sample "
                             "(shorter than the sampling interval).",
                     l.data ? l.data : "");
        pd_str_free(&l);
    }
    if (gaps.nno_gpu) {
        pd_str l = {0};
        list_execs(&l, pg, gaps.no_gpu);
        pd_page_note(pg, "", "No GPU trace (GPU sampling off, or no supported GPU) in %s.",
                     gaps.nno_gpu == shown ? "any execution shown" : l.data ? l.data : "");
        pd_str_free(&l);
    }
    if (gaps.nno_io) {
        pd_str l = {0};
        list_execs(&l, pg, gaps.no_io);
        pd_page_note(pg, "", "No I/O trace (I/O sampling off) in %s.",
                     gaps.nno_io == shown ? "any execution shown" : l.data ? l.data : "");
        pd_str_free(&l);
    }
    free(gaps.short_run);
    free(gaps.no_gpu);
    free(gaps.no_io);
    free(none);
    free(capped);
    pd_str_append(o, "</section>\n");
}

/* ---------- per-task times ---------- */

typedef struct {
    double makespan, mean, cov, share;
    size_t n;
} task_stats;

static task_stats policy_stats(const pd_rep_policy *p)
{
    task_stats st = {.makespan = 0, .n = p->n};
    double sum = 0, ss = 0, share = 0;
    size_t nshare = 0;
    for (size_t i = 0; i < p->n; i++) {
        sum += p->time_s[i];
        if (p->time_s[i] > st.makespan)
            st.makespan = p->time_s[i];
        if (isfinite(p->dram_share[i])) {
            share += p->dram_share[i];
            nshare++;
        }
    }
    st.mean = p->n ? sum / (double)p->n : NAN;
    for (size_t i = 0; i < p->n; i++)
        ss += (p->time_s[i] - st.mean) * (p->time_s[i] - st.mean);
    /* population stddev: the tasks are all the tasks, not a sample */
    st.cov = p->n && st.mean > 0 ? sqrt(ss / (double)p->n) / st.mean : NAN;
    st.share = nshare ? share / (double)nshare : NAN;
    return st;
}

static void fmt_bytes(char *buf, size_t len, double b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (fabs(b) >= 1024 && u + 1 < PD_ARRAY_LEN(units)) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%.3g %s", b, units[u]);
}

static const char *policy_name(const pd_rep_policy *p) { return p->policy[0] ? p->policy : "(no policy)"; }

static void tasks_table(pd_page *pg, const pd_rep_tasks *tk)
{
    pd_str *o = pg->out;
    double best = INFINITY;
    for (size_t i = 0; i < tk->n; i++) {
        task_stats st = policy_stats(&tk->p[i]);
        best = fmin(best, st.makespan);
    }
    pd_str_append(o, "<table class=\"pd-table pd-policies\"><thead><tr><th>policy</th><th>tasks</th>"
                     "<th>makespan [s]</th><th>mean [s]</th><th>CoV</th><th>mean DRAM share</th>"
                     "<th>makespan / best</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < tk->n; i++) {
        task_stats st = policy_stats(&tk->p[i]);
        char a[48], b[48], c[48], d[48], e[48];
        pd_svg_fmt(a, sizeof a, st.makespan, 0);
        pd_svg_fmt(b, sizeof b, st.mean, 0);
        snprintf(c, sizeof c, "%.3f", st.cov);
        if (isfinite(st.share))
            snprintf(d, sizeof d, "%.3f", st.share);
        else
            snprintf(d, sizeof d, "n/a");
        snprintf(e, sizeof e, "%.3f", best > 0 ? st.makespan / best : NAN);
        pd_str_append(o, "<tr><td>");
        pd_html_escape(o, policy_name(&tk->p[i]));
        pd_str_printf(o,
                      "</td><td class=\"pd-num\">%zu</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%s</td>"
                      "<td class=\"pd-num\">%s</td><td class=\"pd-num\">%s</td><td class=\"pd-num\">%s</td></tr>\n",
                      st.n, a, b, isfinite(st.cov) ? c : "n/a", d, best > 0 ? e : "n/a");
    }
    pd_str_append(o, "</tbody></table>\n");
}

static void policy_chart(pd_page *pg, const pd_rep_policy *p, double ymax)
{
    task_stats st = policy_stats(p);
    char **tips = calloc(p->n ? p->n : 1, sizeof *tips);
    for (size_t i = 0; tips && i < p->n; i++) {
        pd_str tip = {0};
        char b[48];
        if (isfinite(p->dram_share[i]))
            pd_str_printf(&tip, "DRAM share %.3f", p->dram_share[i]);
        if (isfinite(p->dram_bytes[i])) {
            fmt_bytes(b, sizeof b, p->dram_bytes[i]);
            pd_str_printf(&tip, "%sDRAM %s", tip.len ? ", " : "", b);
        }
        tips[i] = pd_str_take(&tip);
    }
    pd_str title = {0}, ref = {0}, cap = {0};
    char ms[48], mean[48];
    pd_svg_fmt(ms, sizeof ms, st.makespan, 0);
    pd_svg_fmt(mean, sizeof mean, st.mean, 0);
    pd_str_printf(&title, "Per-task time: %s", policy_name(p));
    pd_str_printf(&ref, "makespan %s s", ms);
    pd_svg_bars b = {.metric = "time_s", .policy = p->policy, .title = title.data, .xlabel = "task",
                     .ylabel = "task time [s]", .labels = (const char *const *)p->tasks, .n = p->n,
                     .v = p->time_s, .tips = (const char *const *)tips, .refline = st.makespan,
                     .reflabel = ref.data, .ymax = ymax};
    pd_page_fig_open(pg);
    pd_svg_bar_chart(pg->out, &b);
    pd_str_printf(&cap, "%zu tasks; makespan %s s (red bar), mean %s s, CoV %.3f", st.n, ms, mean, st.cov);
    if (isfinite(st.share))
        pd_str_printf(&cap, ", mean DRAM share %.3f", st.share);
    pd_str_append(&cap, ". Dashed line: makespan; the further the bars fall below it, the worse the balance.");
    pd_page_fig_close(pg, cap.data);
    for (size_t i = 0; tips && i < p->n; i++)
        free(tips[i]);
    free(tips);
    pd_str_free(&title);
    pd_str_free(&ref);
    pd_str_free(&cap);
}

void pd_page_section_tasks(pd_page *pg)
{
    pd_str *o = pg->out;
    pd_str_append(o, "<section id=\"pd-tasks\"><h2>Per-task times (placement studies)</h2>\n");
    size_t shown = 0, capped = 0;
    for (size_t i = 0; i < pg->run.nexecs; i++) {
        const pd_rep_exec *ex = &pg->run.execs[i];
        for (size_t r = 0; r < ex->nreps; r++) {
            pd_str path = {0};
            pd_str_printf(&path, "%s/%s/%s/paddiser_tasks.csv", pg->run.exec_root, ex->id, ex->reps[r]);
            if (!path.data || !file_exists(path.data)) {
                pd_str_free(&path);
                continue;
            }
            if (shown >= PD_PAGE_MAX_EXECS_TASKS) {
                capped++;
                pd_str_free(&path);
                break;
            }
            exec_heading(pg, ex, ex->reps[r]);
            shown++;
            pd_rep_tasks tk;
            char err[512];
            if (pd_rep_tasks_load(path.data, &tk, err, sizeof err) != 0) {
                size_t skip = strlen(pg->run_dir);
                pd_page_note(pg, "pd-missing", "Cannot use %s", err + (strncmp(err, pg->run_dir, skip) ? 0 : skip + 1));
                pd_str_free(&path);
                break;
            }
            tasks_table(pg, &tk);
            if (tk.nbad_rows)
                pd_page_note(pg, "", "Rows of paddiser_tasks.csv skipped as malformed: %zu.", tk.nbad_rows);
            pd_str_append(o, "<div class=\"pd-grid\">\n");
            /* one y scale for all policies, so bar heights compare */
            double ymax = 0;
            for (size_t k = 0; k < tk.n; k++)
                ymax = fmax(ymax, policy_stats(&tk.p[k]).makespan);
            for (size_t k = 0; k < tk.n; k++)
                policy_chart(pg, &tk.p[k], ymax);
            pd_str_append(o, "</div>\n");
            pd_rep_tasks_free(&tk);
            pd_str_free(&path);
            break; /* first repetition with the file */
        }
    }
    if (!shown)
        pd_page_note(pg, "pd-missing", "No paddiser_tasks.csv in any repetition: not a placement study.");
    if (capped)
        pd_page_note(pg, "", "Per-task bars shown for the first %d executions; %zu more have a paddiser_tasks.csv.",
                     PD_PAGE_MAX_EXECS_TASKS, capped);
    pd_str_append(o, "</section>\n");
}
