/* Core-hours budget: see budget.h. */
#include "bench/budget.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/run.h"
#include "common/util.h"

typedef struct {
    const pd_bench_config *cfg;
    const pd_val *values;
} vars_scope;

static bool lookup_var(void *ud, const char *name, pd_val *out)
{
    const vars_scope *s = ud;
    for (size_t i = 0; i < s->cfg->nvars; i++)
        if (!strcmp(s->cfg->vars[i].name, name)) {
            *out = pd_val_copy(&s->values[i]);
            return true;
        }
    return false;
}

long pd_bench_cores(const pd_bench_config *cfg, const pd_val *values, char *err, size_t errlen)
{
    if (!cfg->cores_expr.text)
        return 1;
    vars_scope s = {cfg, values};
    pd_str r = {0};
    pd_val v = {0};
    long cores = -1;
    int line = 0;
    char e[256] = "";
    const char *text = cfg->cores_expr.text;
    /* IOPS renders the template, then evaluates what it gives ("{{ n }} * 2") */
    if (pd_template_has_tags(text) && pd_template_render(text, lookup_var, &s, &r, e, sizeof e, &line) != 0)
        goto out;
    if (pd_expr_eval(r.data ? r.data : text, lookup_var, &s, &v, e, sizeof e) != 0)
        goto out;
    if (v.kind == PD_VAL_INT)
        cores = v.i < 1 ? 1 : v.i > 1L << 40 ? 1L << 40 : (long)v.i;
    else if (v.kind == PD_VAL_FLOAT && isfinite(v.f))
        cores = v.f < 1 ? 1 : v.f > 1e12 ? (long)1e12 : (long)v.f; /* int() truncates */
    else
        snprintf(e, sizeof e, "gives '%s', not a number of cores", r.data ? r.data : text);
out:
    if (cores < 0)
        snprintf(err, errlen, "%s:%d: %s: %s", cfg->path ? cfg->path : "study", cfg->cores_expr.line,
                 cfg->cores_expr.key ? cfg->cores_expr.key : "benchmark.cores_expr", e);
    pd_str_free(&r);
    pd_val_free(&v);
    return cores;
}

static long task_cores(const pd_bench_run *run, const pd_bench_task *t)
{
    char err[512];
    const pd_val *values = t->values ? t->values : run->matrix.execs[t->exec_idx].values;
    long c = pd_bench_cores(&run->cfg, values, err, sizeof err);
    return c < 1 ? 1 : c; /* checked before the run started */
}

void pd_bench_budget_add(pd_bench_run *run, const pd_bench_task *t, double duration_s, bool cached)
{
    if (!(duration_s > 0))
        return;
    double ch = (double)task_cores(run, t) * duration_s / 3600.0;
    if (cached)
        run->budget.saved += ch;
    else
        run->budget.used += ch;
}

bool pd_bench_budget_exhausted(pd_bench_run *run)
{
    if (run->budget.max <= 0 || run->budget.used < run->budget.max)
        return false;
    if (!run->budget.stopped)
        fprintf(stderr, "paddiser bench: budget reached: %.4f of %.4f core-hours used; no more repetitions are "
                        "started (running ones finish)\n",
                run->budget.used, run->budget.max);
    run->budget.stopped = true;
    return true;
}

void pd_bench_budget_estimate(const pd_bench_run *run, const double *seconds, size_t nseconds, FILE *out)
{
    size_t to_run = 0;
    double core_seconds_each = 0; /* sum of cores over the repetitions that would run */
    for (size_t k = 0; k < run->ntasks; k++) {
        if (run->tasks[k].cached)
            continue;
        to_run++;
        core_seconds_each += (double)task_cores(run, &run->tasks[k]);
    }
    fprintf(out, "core-hours estimate: %zu repetitions to run, %.0f cores in all\n", to_run, core_seconds_each);
    for (size_t i = 0; i < nseconds; i++) {
        double ch = core_seconds_each * seconds[i] / 3600.0;
        fprintf(out, "  %g s per repetition: %.4f core-hours, %.2f hours sequential", seconds[i], ch,
                (double)to_run * seconds[i] / 3600.0);
        if (run->budget.max > 0) {
            double avg = to_run ? ch / (double)to_run : 0;
            if (ch > run->budget.max)
                fprintf(out, "; exceeds the budget of %g core-hours by %.4f: about %zu repetitions fit",
                        run->budget.max, ch - run->budget.max, avg > 0 ? (size_t)(run->budget.max / avg) : to_run);
            else
                fprintf(out, "; within the budget of %g core-hours (%.1f%%)", run->budget.max,
                        100.0 * ch / run->budget.max);
        }
        fputc('\n', out);
    }
    if (!nseconds)
        fprintf(out, "  no estimate: give --time-estimate SECONDS or benchmark.estimated_time_seconds\n");
}

void pd_bench_budget_report(const pd_bench_run *run, FILE *out)
{
    size_t unstarted = 0;
    for (size_t k = 0; k < run->ntasks; k++)
        unstarted += run->tasks[k].state == PD_TASK_PENDING;
    if (run->budget.max > 0 && run->budget.stopped)
        fprintf(out, "core-hours: %.4f of %g used (budget reached: %zu repetitions left unstarted; --resume runs "
                     "them)\n", run->budget.used, run->budget.max, unstarted);
    else if (run->budget.max > 0)
        fprintf(out, "core-hours: %.4f of %g used\n", run->budget.used, run->budget.max);
    else if (run->budget.used > 0 && run->cfg.cores_expr.text)
        fprintf(out, "core-hours: %.4f used\n", run->budget.used);
    if (run->budget.saved > 0 && (run->budget.max > 0 || run->cfg.cores_expr.text))
        fprintf(out, "core-hours saved by the cache: %.4f\n", run->budget.saved);
}

int pd_bench_budget_setup(pd_bench_run *run, double cli_max)
{
    run->budget.max = cli_max > 0 ? cli_max : run->cfg.max_core_hours;
    if (!run->cfg.cores_expr.text)
        return 0;
    /* IOPS stops at an unknown variable here too: a typo would make every
     * repetition 1 core and the budget meaningless */
    for (size_t e = 0; e < run->matrix.nexecs; e++) {
        char err[512];
        if (pd_bench_cores(&run->cfg, run->matrix.execs[e].values, err, sizeof err) < 0) {
            fprintf(stderr, "%s (exec_%04d)\n", err, run->matrix.execs[e].id);
            return -1;
        }
    }
    return 0;
}

void pd_bench_budget_dry_run(const pd_bench_run *run, const double *seconds, size_t nseconds, FILE *out)
{
    if (!nseconds && run->cfg.estimated_time_s > 0) {
        seconds = &run->cfg.estimated_time_s;
        nseconds = 1;
    }
    if (nseconds || run->budget.max > 0 || run->cfg.cores_expr.text)
        pd_bench_budget_estimate(run, seconds, nseconds, out);
}
