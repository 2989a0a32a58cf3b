/* The runtime on a realistic workload (issue #11, "Done when"): runs
 * examples/runtime/phases (a multi-phase OpenMP program, several inputs
 * with per-input reallocation, integrated as docs/runtime.md says) with the
 * runtime on the sim backend and with no runtime call at all, interleaved
 * in alternating order, and measures from the example's own per-instance
 * lines:
 *
 *   (a) later instances of an input (any instance after its first): median
 *       |predicted - measured| / measured of the runtime's makespan
 *       prediction, and of the naive predictor "the previous instance of the
 *       same input took this long" on the same instances, and their ratio;
 *       for reference, the median of the input's previous instances (up to
 *       16, the runtime's window): what averaging the noise away can give;
 *       and an oracle no predictor can be: the mean of the other instances
 *       of the visit, later ones included (past its first, the warm-up):
 *       better than any average of past instances can do where the noise
 *       is independent (the naive predictor's error is then sqrt(2) sigmas,
 *       the oracle's about 1), so its ratio to naive says what averaging
 *       can reach on this machine's noise;
 *   (b) the first instance of each new input: median |error|;
 *   (c) once warmed up (from an input's third instance on), the coefficient
 *       of variation of the runtime's predictions of an unchanged input;
 *       for reference, that of the walls of the same instances (a
 *       predictor that follows a drift varies as they do);
 *   (d) overhead: the example's total (instances' wall time plus every
 *       runtime call: registration, sync points, plan queries) with the
 *       runtime over the same without, median over the runs; and the same
 *       from the second instance on (the first, sampled whole for the
 *       profile, is a cost paid once per run); and how many instances the
 *       sampler armed pages in per run, with their measured cost over the
 *       instances' time (what the long-run share bounds, 2% by default),
 *       the later instances' extra wall time, sampled and not apart, and
 *       (d) by part (the first instance, the later sampled and unsampled
 *       instances, the runtime calls between instances);
 *   (e) bytes migrated at the sync points between instances of an
 *       unchanged input once warmed up (after its third instance of a visit).
 *
 * "Measured" is the wall time of the instance's parallel region (what the
 * user waits for); the same statistics against the slowest task's time
 * between its pd_task_begin and pd_task_end calls (what the runtime models)
 * are printed too. Each statistic is computed per run; the table gives the
 * median over the runs, its 95% confidence interval (bench_median_ci95)
 * and their range. A benchmark, not a test: the
 * numbers depend on this machine and on its load.
 *
 *   make bench-phases [PHASES_BENCH_ARGS="--runs 10 --mib 256 --passes 3"]
 *
 * Options: --example PATH (default build/examples/runtime/phases), --runs N
 * (each way, default 10), --mib M, --scales LIST, --reps K, --threads N,
 * --passes P, --sweeps S (passed to the example), --fast-frac F (sim fast capacity as a
 * fraction of M MiB, default 0.25), --keep DIR (write each run's output
 * there), --compare NAME=VALUE (a third arm, interleaved with the other
 * two: the runtime with that environment variable set, whose (a) - (e)
 * are printed below the default's, with the runs in which the default
 * did better on (a)'s ratio and on (c): a runtime option's effect under
 * the same drift; its (b) also over runs 2 .. N, for a setting one run
 * leaves to the next: --compare PADDISER_PROFILE_STORE=FILE, FILE in a
 * directory of your own). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_stats.h"
#include "common/util.h"

#define MAX_INST 4096
#define MAX_RUNS 200
#define MIB (1024.0 * 1024.0)

typedef struct {
    int visit, occ, rep, ok;
    int sampled; /* the sampler armed pages in it (-1: the example did not say) */
    double mib, wall, task, pred, sync, calls;
    double moved;
    char checksum[128];
} inst_rec;

typedef struct {
    inst_rec *r;
    int n;
    double total_s;
    int verified, instances, errors, ids_kept, planned, summary;
    int objects, unsampled; /* objects in the "accesses:" line, and those with none sampled */
    double sampled, sampling_cost_s, work_s; /* instances the sampler armed, their cost, all instances' time */
} run_rec;

static const char *field(const char *line, const char *key, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1;
            size_t n = strcspn(v, " \n");
            if (n >= len)
                n = len - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return buf;
        }
    }
    return NULL;
}

static double num(const char *line, const char *key)
{
    char b[128];
    return field(line, key, b, sizeof b) ? strtod(b, NULL) : NAN;
}

/* Runs the example once; returns 0 and fills *run, or -1. */
static int run_example(const char *cmd, const char *keep_path, run_rec *run)
{
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror("phases_bench: popen");
        return -1;
    }
    FILE *keep = keep_path ? fopen(keep_path, "w") : NULL;
    memset(run, 0, sizeof *run);
    run->r = calloc(MAX_INST, sizeof *run->r);
    if (!run->r) {
        pclose(p);
        return -1;
    }
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        if (keep)
            fputs(line, keep);
        if (!strncmp(line, "instance=", 9) && run->n < MAX_INST) {
            inst_rec *r = &run->r[run->n++];
            r->visit = (int)num(line, "visit");
            r->occ = (int)num(line, "occurrence");
            r->rep = (int)num(line, "rep");
            r->ok = (int)num(line, "ok");
            double sm = num(line, "sampled");
            r->sampled = isfinite(sm) ? (int)sm : -1;
            r->mib = num(line, "input_mib");
            r->wall = num(line, "wall_s");
            r->task = num(line, "task_makespan_s");
            r->pred = num(line, "predicted_s");
            r->sync = num(line, "sync_s");
            r->calls = num(line, "task_calls_s");
            r->moved = num(line, "moved_bytes");
            if (!field(line, "checksum", r->checksum, sizeof r->checksum))
                r->checksum[0] = '\0';
        } else if (!strncmp(line, "accesses:", 9)) {
            for (const char *q = line; (q = strchr(q, '=')) != NULL; q++) {
                run->objects++;
                run->unsampled += strtod(q + 1, NULL) == 0;
            }
        } else if (!strncmp(line, "summary:", 8)) {
            run->summary = 1;
            run->total_s = num(line, "total_s");
            run->verified = (int)num(line, "verified");
            run->instances = (int)num(line, "instances");
            run->errors = (int)num(line, "runtime_errors");
            run->ids_kept = (int)num(line, "ids_kept");
            run->planned = (int)num(line, "planned_tasks");
            run->sampled = num(line, "instances_sampled");
            run->sampling_cost_s = num(line, "sampling_cost_s");
            run->work_s = num(line, "work_s");
        }
    }
    if (keep)
        fclose(keep);
    int st = pclose(p);
    if (st != 0 || !run->summary || run->verified != run->instances) {
        fprintf(stderr, "phases_bench: '%s' failed (status %d, %d of %d instances verified)\n", cmd, st,
                run->verified, run->instances);
        return -1;
    }
    return 0;
}

typedef struct {
    double later_rt, later_naive, ratio;       /* (a), against the wall time */
    double later_window, ratio_window;         /* reference: median of the input's previous walls */
    double later_oracle, ratio_oracle;         /* the visit's other instances' mean (knows the future) */
    double later_rt_task, later_naive_task, ratio_task;
    double first;                              /* (b) */
    /* (b) by new input, in the order they came: signed error and size */
#define PB_MAX_FIRST 16
    double first_signed[PB_MAX_FIRST], first_mib[PB_MAX_FIRST];
    double cv_worst;                           /* (c): the worst input */
    double cv_wall_worst;                      /* (c)'s reference: the walls' CV, the same instances */
    double moved_warm;                         /* (e): bytes */
    int nlater, nfirst, nwarm_sync;
} run_stats;

/* Statistics of one run with the runtime. reps: instances per visit. */
static void run_statistics(const run_rec *run, int reps, double *moved_at, run_stats *s)
{
    int n = run->n;
    double *ert = calloc((size_t)n + 1, sizeof(double)), *env = calloc((size_t)n + 1, sizeof(double));
    double *ertt = calloc((size_t)n + 1, sizeof(double)), *envt = calloc((size_t)n + 1, sizeof(double));
    double *ef = calloc((size_t)n + 1, sizeof(double)), *v = calloc((size_t)n + 1, sizeof(double));
    double *ew = calloc((size_t)n + 1, sizeof(double)), *win = calloc((size_t)n + 1, sizeof(double));
    double *eo = calloc((size_t)n + 1, sizeof(double));
    memset(s, 0, sizeof *s);
    for (int j = 0; j < n; j++) {
        const inst_rec *r = &run->r[j];
        if (!isfinite(r->pred))
            continue;
        if (r->occ == 0) {
            double e = (r->pred - r->wall) / r->wall;
            if (s->nfirst < PB_MAX_FIRST) {
                s->first_signed[s->nfirst] = e;
                s->first_mib[s->nfirst] = r->mib;
            }
            ef[s->nfirst++] = fabs(e);
            continue;
        }
        const inst_rec *prev = NULL; /* the previous instance of the same input */
        for (int q = j - 1; q >= 0 && !prev; q--)
            if (run->r[q].mib == r->mib)
                prev = &run->r[q];
        if (!prev)
            continue;
        /* the reference: the median of up to 16 previous instances of the
         * input (the runtime's window), what averaging alone would give */
        size_t nw = 0;
        for (int q = j - 1; q >= 0 && nw < 16; q--)
            if (run->r[q].mib == r->mib)
                win[nw++] = run->r[q].wall;
        ew[s->nlater] = fabs(bench_median(win, nw) - r->wall) / r->wall;
        /* the oracle: the visit (instances of one input in a row) */
        int a = j, b = j;
        while (a > 0 && run->r[a].rep > 0 && run->r[a - 1].mib == r->mib)
            a--;
        while (b + 1 < n && run->r[b + 1].rep > 0 && run->r[b + 1].mib == r->mib)
            b++;
        double sum = 0;
        int no = 0;
        for (int q = a; q <= b; q++)
            if (q != j && run->r[q].rep > 0)
                sum += run->r[q].wall, no++;
        eo[s->nlater] = no ? fabs(sum / no - r->wall) / r->wall : NAN;
        ert[s->nlater] = fabs(r->pred - r->wall) / r->wall;
        env[s->nlater] = fabs(prev->wall - r->wall) / r->wall;
        ertt[s->nlater] = fabs(r->pred - r->task) / r->task;
        envt[s->nlater] = fabs(prev->task - r->task) / r->task;
        s->nlater++;
    }
    s->later_rt = bench_median(ert, (size_t)s->nlater);
    s->later_naive = bench_median(env, (size_t)s->nlater);
    s->ratio = s->later_rt / s->later_naive;
    s->later_window = bench_median(ew, (size_t)s->nlater);
    s->ratio_window = s->later_window / s->later_naive;
    size_t neo = 0;
    for (int i = 0; i < s->nlater; i++)
        if (isfinite(eo[i]))
            eo[neo++] = eo[i];
    s->later_oracle = bench_median(eo, neo);
    s->ratio_oracle = s->later_oracle / s->later_naive;
    s->later_rt_task = bench_median(ertt, (size_t)s->nlater);
    s->later_naive_task = bench_median(envt, (size_t)s->nlater);
    s->ratio_task = s->later_rt_task / s->later_naive_task;
    s->first = bench_median(ef, (size_t)s->nfirst);
    /* (c) per input (by size), predictions from its third instance on */
    s->cv_worst = s->cv_wall_worst = NAN;
    for (int j = 0; j < n; j++) {
        int seen_before = 0;
        for (int q = 0; q < j; q++)
            seen_before |= run->r[q].mib == run->r[j].mib;
        if (seen_before)
            continue;
        size_t m = 0;
        for (int q = 0; q < n; q++)
            if (run->r[q].mib == run->r[j].mib && run->r[q].occ >= 2 && isfinite(run->r[q].pred))
                v[m++] = run->r[q].pred;
        double c = bench_cv(v, m);
        if (isfinite(c) && !(c <= s->cv_worst))
            s->cv_worst = c;
        /* the walls of the same instances: how much there was to follow */
        m = 0;
        for (int q = 0; q < n; q++)
            if (run->r[q].mib == run->r[j].mib && run->r[q].occ >= 2 && isfinite(run->r[q].pred))
                v[m++] = run->r[q].wall;
        c = bench_cv(v, m);
        if (isfinite(c) && !(c <= s->cv_wall_worst))
            s->cv_wall_worst = c;
    }
    /* (e) the sync point after instance `rep` of a visit, when the next
     * instance is the same input (rep < reps - 1) */
    for (int j = 0; j < n; j++) {
        const inst_rec *r = &run->r[j];
        if (r->rep >= reps - 1)
            continue;
        moved_at[r->rep] += r->moved;
        if (r->rep >= 2) {
            s->moved_warm += r->moved;
            s->nwarm_sync++;
        }
    }
    free(ert);
    free(env);
    free(ertt);
    free(envt);
    free(ef);
    free(v);
    free(ew);
    free(win);
    free(eo);
}

typedef double (*stat_get)(const run_stats *);
#define GETTER(name, expr)                                                                                     \
    static double name(const run_stats *s)                                                                     \
    {                                                                                                          \
        return expr;                                                                                           \
    }
GETTER(g_later_rt, s->later_rt)
GETTER(g_later_naive, s->later_naive)
GETTER(g_ratio, s->ratio)
GETTER(g_later_window, s->later_window)
GETTER(g_ratio_window, s->ratio_window)
GETTER(g_later_oracle, s->later_oracle)
GETTER(g_ratio_oracle, s->ratio_oracle)
GETTER(g_later_rt_task, s->later_rt_task)
GETTER(g_later_naive_task, s->later_naive_task)
GETTER(g_ratio_task, s->ratio_task)
GETTER(g_first, s->first)
GETTER(g_cv, s->cv_worst)
GETTER(g_cv_wall, s->cv_wall_worst)
GETTER(g_moved, s->moved_warm / MIB)

/* The median of the finite values of get over the runs, its 95%
 * confidence interval (cl, ch; NaN with fewer than 6) and their range. */
static void over_runs(const run_stats *st, int n, stat_get get, double *med, double *cl, double *ch, double *lo,
                      double *hi)
{
    double *v = calloc((size_t)n + 1, sizeof *v);
    size_t m = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int i = 0; v && i < n; i++) {
        double x = get(&st[i]);
        if (!isfinite(x))
            continue;
        v[m++] = x;
        *lo = x < *lo ? x : *lo;
        *hi = x > *hi ? x : *hi;
    }
    bench_median_ci95(v, m, cl, ch);
    *med = bench_median(v, m);
    free(v);
}

/* "[lo, hi]" of a confidence interval scaled by scale, or "-". */
static const char *ci_text(char *buf, size_t len, double lo, double hi, double scale)
{
    if (isfinite(lo) && isfinite(hi))
        snprintf(buf, len, "[%.2f, %.2f]", scale * lo, scale * hi);
    else
        snprintf(buf, len, "-");
    return buf;
}

static void row(const char *what, const run_stats *st, int n, stat_get get, double scale, const char *unit,
                const char *target, int (*met)(double))
{
    double med, cl, ch, lo, hi;
    char ci[64];
    over_runs(st, n, get, &med, &cl, &ch, &lo, &hi);
    printf("  %-52s %8.2f%-3s %-18s %8.2f .. %-8.2f %-8s %s\n", what, scale * med, unit,
           ci_text(ci, sizeof ci, cl, ch, scale), scale * lo, scale * hi, target, met ? (met(med) ? "yes" : "NO") : "");
}

/* (b) new input by new input: which switch misses (every run sees the
 * inputs in the same order). */
static void first_by_input(const run_stats *st, int runs)
{
    int k_max = st[0].nfirst < PB_MAX_FIRST ? st[0].nfirst : PB_MAX_FIRST;
    if (k_max < 2)
        return;
    printf("      by new input, signed, median over runs:");
    double *v = calloc((size_t)runs, sizeof *v);
    for (int k = 0; v && k < k_max; k++) {
        size_t m = 0;
        for (int i = 0; i < runs; i++)
            if (k < st[i].nfirst)
                v[m++] = st[i].first_signed[k];
        printf("%s %g MiB %+.1f%%", k ? "," : "", st[0].first_mib[k], 100 * bench_median(v, m));
    }
    printf("\n");
    free(v);
}

static int met_err10(double x) { return x < 0.10; }
static int met_ratio(double x) { return x <= 0.75; }
static int met_first(double x) { return x <= 0.15; }
static int met_cv(double x) { return x < 0.10; }
static int met_zero(double x) { return x == 0; }

static void usage(FILE *f)
{
    fprintf(f, "usage: phases_bench [--example PATH] [--runs N] [--mib M] [--scales LIST] [--reps K]\n"
               "                    [--threads N] [--passes P] [--sweeps S] [--fast-frac F] [--keep DIR]\n"
               "                    [--compare NAME=VALUE]\n");
}

/* The median of the runs' paired ratios (with / without - 1) and its
 * confidence interval: a drift from run to run (this project's VM: whole
 * runs 10 - 20% slower) moves it less than the ratio of the medians. */
#define PAIRED_LABEL "    the median of the runs' paired ratios - 1"
static void paired_row(const double *paired, int runs)
{
    double cl, ch;
    char ci[64];
    bench_median_ci95(paired, (size_t)runs, &cl, &ch);
    double *c = malloc((size_t)runs * sizeof *c);
    if (!c)
        return;
    memcpy(c, paired, (size_t)runs * sizeof *c);
    printf("  %-52s %8.2f%-3s %s\n", PAIRED_LABEL, 100 * bench_median(c, (size_t)runs), "%",
           ci_text(ci, sizeof ci, cl, ch, 100));
    free(c);
}

/* (d) of an arm: the median of its totals over the median without the
 * runtime, minus 1, and the range of the runs' paired ratios, with the
 * target where `target` is set (the default arm's); then the paired row.
 * 1 out of memory. */
static int overhead_row(const char *label, const run_rec *with, const run_rec *off, int runs, int target)
{
    double *tw = calloc((size_t)runs, sizeof *tw), *to = calloc((size_t)runs, sizeof *to);
    if (!tw || !to) {
        free(tw);
        free(to);
        return 1;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < runs; i++) {
        tw[i] = with[i].total_s;
        to[i] = off[i].total_s;
        double r = with[i].total_s / off[i].total_s - 1;
        lo = r < lo ? r : lo;
        hi = r > hi ? r : hi;
    }
    double overhead = bench_median(tw, (size_t)runs) / bench_median(to, (size_t)runs) - 1;
    printf("  %-52s %8.2f%-3s %-18s %8.2f .. %-8.2f", label, 100 * overhead, "%", "", 100 * lo, 100 * hi);
    if (target)
        printf(" %-8s %s", "<= 3%", overhead <= 0.03 ? "yes" : "NO");
    printf("\n");
    for (int i = 0; i < runs; i++)
        tw[i] = with[i].total_s / off[i].total_s - 1;
    paired_row(tw, runs);
    free(tw);
    free(to);
    return 0;
}

/* What the later instances cost, sampled or not: per run, the wall time of
 * its later instances (past the first) the sampler armed pages in, with the
 * runtime over the same instances without it, minus 1, and the same for
 * those it left alone; the median over the runs that had any. Where the
 * sampled ones cost more than their measured cost, page protection's wall
 * cost is larger than the sampler counts; where the others cost anything,
 * the runtime costs more than sampling. Then (d) by part, each over the
 * run's instances' time without the runtime: the first instance's extra
 * wall time, the later sampled and unsampled instances' extra, and the
 * runtime calls between instances (sync points, registration, plan
 * queries); the medians over the runs, which need not add up exactly.
 * 1 out of memory. */
enum { PART_FIRST, PART_SAMPLED, PART_UNSAMPLED, PART_CALLS, NPARTS };

static int sampled_split(const run_rec *with, const run_rec *off, int runs)
{
    double *rs = calloc((size_t)runs, sizeof *rs), *ru = calloc((size_t)runs, sizeof *ru);
    double *part = calloc((size_t)runs * NPARTS, sizeof *part), *calls_ms = calloc((size_t)runs, sizeof *calls_ms);
    if (!rs || !ru || !part || !calls_ms) {
        free(rs);
        free(ru);
        free(part);
        free(calls_ms);
        return 1;
    }
    size_t ns = 0, nu = 0, np = 0;
    for (int i = 0; i < runs; i++) {
        double ws = 0, os = 0, wu = 0, ou = 0;
        int known = with[i].n == off[i].n && with[i].n > 0;
        for (int k = 1; known && k < with[i].n; k++) {
            const inst_rec *a = &with[i].r[k], *b = &off[i].r[k];
            if (a->sampled < 0 || a->visit != b->visit || a->rep != b->rep) {
                known = 0;
                break;
            }
            if (a->sampled) {
                ws += a->wall;
                os += b->wall;
            } else {
                wu += a->wall;
                ou += b->wall;
            }
        }
        if (known && os > 0)
            rs[ns++] = ws / os - 1;
        if (known && ou > 0)
            ru[nu++] = wu / ou - 1;
        double w = off[i].work_s;
        if (known && w > 0) {
            part[PART_FIRST * (size_t)runs + np] = (with[i].r[0].wall - off[i].r[0].wall) / w;
            part[PART_SAMPLED * (size_t)runs + np] = (ws - os) / w;
            part[PART_UNSAMPLED * (size_t)runs + np] = (wu - ou) / w;
            part[PART_CALLS * (size_t)runs + np] = (with[i].total_s - with[i].work_s) / w;
            calls_ms[np++] = 1e3 * (with[i].total_s - with[i].work_s);
        }
    }
    if (ns)
        printf("  %-52s %+7.2f%%   (%zu runs)\n", "    later sampled instances, with / without - 1", 100 * bench_median(rs, ns),
               ns);
    if (nu)
        printf("  %-52s %+7.2f%%   (%zu runs)\n", "    later instances not sampled, with / without - 1",
               100 * bench_median(ru, nu), nu);
    if (np) {
        static const char *const label[NPARTS] = {
            "      the first instance's extra wall time",
            "      the later sampled instances' extra wall time",
            "      the later unsampled instances' extra wall time",
            "      runtime calls between instances",
        };
        printf("  %s\n", "    (d) by part, over the instances' time without the runtime:");
        for (int q = 0; q < NPARTS; q++)
            printf("  %-52s %+7.2f%%\n", label[q], 100 * bench_median(part + (size_t)q * (size_t)runs, np));
        printf("  %-52s %8.1f ms\n", "      ... the calls a run, median", bench_median(calls_ms, np));
    }
    free(rs);
    free(ru);
    free(part);
    free(calls_ms);
    return 0;
}

/* (d) from the second instance on, and the first instance's extra wall
 * time: the first instance of a run is sampled whole (its profile; the
 * share bounds the rest), a cost paid once, whatever the run's length,
 * unless an earlier run's heat lets it be sampled thinly (the profile
 * store). 1 out of memory. */
static int first_instance_split(const run_rec *with, const run_rec *off, int runs)
{
    double *aon = calloc((size_t)runs, sizeof *aon), *aoff = calloc((size_t)runs, sizeof *aoff);
    double *first_extra = calloc((size_t)runs, sizeof *first_extra);
    double *sampled = calloc((size_t)runs, sizeof *sampled), *cost = calloc((size_t)runs, sizeof *cost);
    if (!aon || !aoff || !first_extra || !sampled || !cost) {
        free(aon);
        free(aoff);
        free(first_extra);
        free(sampled);
        free(cost);
        return 1;
    }
    for (int i = 0; i < runs; i++) {
        double w_on = with[i].n ? with[i].r[0].wall : 0, w_off = off[i].n ? off[i].r[0].wall : 0;
        aon[i] = with[i].total_s - w_on;
        aoff[i] = off[i].total_s - w_off;
        first_extra[i] = w_on - w_off;
        sampled[i] = with[i].sampled;
        cost[i] = with[i].work_s > 0 ? with[i].sampling_cost_s / with[i].work_s : NAN;
    }
    double after = bench_median(aon, (size_t)runs) / bench_median(aoff, (size_t)runs) - 1;
    printf("  %-52s %8.2f%%\n", "    after the first (sampled) instance", 100 * after);
    printf("  %-52s %8.1f ms\n", "    the first instance's extra wall time, median",
           1e3 * bench_median(first_extra, (size_t)runs));
    /* what the long-run share let the sampler do besides the first */
    if (isfinite(with[0].sampled)) {
        double lo, hi;
        bench_range(sampled, (size_t)runs, &lo, &hi);
        printf("  %-52s %8.1f       %.0f .. %.0f\n", "    instances sampled a run", bench_median(sampled, (size_t)runs),
               lo, hi);
        printf("  %-52s %8.2f%%\n", "    their measured cost over the instances' time",
               100 * bench_median(cost, (size_t)runs));
    }
    int rc = isfinite(with[0].sampled) ? sampled_split(with, off, runs) : 0;
    free(sampled);
    free(cost);
    free(aon);
    free(aoff);
    free(first_extra);
    return rc;
}

/* One run of one arm (0 with the runtime, 1 without, 2 the runtime with
 * cmp_name=cmp_value set), its output kept as keep/{on,off,cmp}_NN.txt. */
static int run_arm(int arm, const char *base, const char *keep, int i, run_rec *rec, const char *cmp_name,
                   const char *cmp_value)
{
    static const char *const tag[] = {"on", "off", "cmp"};
    char cmd[1200], kp[1024];
    snprintf(cmd, sizeof cmd, "%s%s", base, arm == 1 ? " --no-runtime" : "");
    if (keep)
        snprintf(kp, sizeof kp, "%s/%s_%02d.txt", keep, tag[arm], i);
    if (arm != 2)
        return run_example(cmd, keep ? kp : NULL, rec);
    const char *was = getenv(cmp_name);
    char *saved = was ? strdup(was) : NULL;
    setenv(cmp_name, cmp_value, 1);
    int rc = run_example(cmd, keep ? kp : NULL, rec);
    if (saved)
        setenv(cmp_name, saved, 1);
    else
        unsetenv(cmp_name);
    free(saved);
    return rc;
}

/* The default example is the one `make runtime-examples` built beside the
 * library in build/: `make all` does not rebuild it, so after a change to
 * the library this bench, run by hand, would measure the old runtime
 * without a word (it did, once). An example named with --example is
 * measured as it is (a comparison with an older build). 0 when it exists
 * and is not older than build/libpaddiser.a. */
static int default_example_stale(const char *example)
{
    struct stat ex, lib;
    if (stat(example, &ex) != 0) {
        fprintf(stderr, "phases_bench: %s: %s: run 'make runtime-examples' in the repository root first, "
                        "or name the example with --example PATH\n", example, strerror(errno));
        return -1;
    }
    if (stat("build/libpaddiser.a", &lib) == 0 &&
        (ex.st_mtim.tv_sec < lib.st_mtim.tv_sec ||
         (ex.st_mtim.tv_sec == lib.st_mtim.tv_sec && ex.st_mtim.tv_nsec < lib.st_mtim.tv_nsec))) {
        fprintf(stderr, "phases_bench: %s is older than build/libpaddiser.a, so it would measure an earlier "
                        "runtime: run 'make runtime-examples' first (or 'make bench-phases'), or name it with "
                        "--example PATH to measure it as it is\n", example);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *example = "build/examples/runtime/phases", *scales = "0.5,1,0.75,0.5", *keep = NULL;
    const char *compare = NULL;
    int named_example = 0;
    int runs = 10, reps = 6, threads = 2, passes = 3, sweeps = 4;
    double mib = 256, fast_frac = 0.25;
    static const struct option longopts[] = {
        {"example", required_argument, NULL, 'e'}, {"runs", required_argument, NULL, 'r'},
        {"mib", required_argument, NULL, 'm'},     {"scales", required_argument, NULL, 's'},
        {"reps", required_argument, NULL, 'k'},    {"threads", required_argument, NULL, 't'},
        {"passes", required_argument, NULL, 'p'},  {"fast-frac", required_argument, NULL, 'f'},
        {"keep", required_argument, NULL, 'K'},    {"help", no_argument, NULL, 'h'},
        {"sweeps", required_argument, NULL, 'w'},  {"compare", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e': example = optarg; named_example = 1; break;
        case 'r': runs = atoi(optarg); break;
        case 'm': mib = atof(optarg); break;
        case 's': scales = optarg; break;
        case 'k': reps = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'p': passes = atoi(optarg); break;
        case 'f': fast_frac = atof(optarg); break;
        case 'K': keep = optarg; break;
        case 'w': sweeps = atoi(optarg); break;
        case 'c': compare = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || !(mib > 0) || reps < 3 || threads < 1 || passes < 1 || sweeps < 1 || !(fast_frac > 0) ||
        optind != argc || strchr(example, '\'') || strspn(scales, "0123456789.,") != strlen(scales) ||
        (compare && (!strchr(compare, '=') || strchr(compare, '=') == compare))) {
        usage(stderr);
        return 2;
    }
    if (!named_example && default_example_stale(example) != 0)
        return 1;
    if (keep && pd_mkdir_p(keep, 0755) != 0) {
        perror(keep);
        return 1;
    }
    size_t capacity = (size_t)(fast_frac * mib * MIB);
    char cap[32];
    snprintf(cap, sizeof cap, "%zu", capacity);
    setenv("PADDISER_BACKEND", "sim", 1);
    setenv("PADDISER_FAST_CAPACITY", cap, 1);
    setenv("PADDISER_QUIET", "1", 1);

    char base[1024];
    snprintf(base, sizeof base, "'%s' --mib %g --scales %s --reps %d --threads %d --passes %d --sweeps %d", example,
             mib, scales, reps, threads, passes, sweeps);
    run_rec *on = calloc((size_t)runs, sizeof *on), *off = calloc((size_t)runs, sizeof *off);
    run_stats *st = calloc((size_t)runs, sizeof *st);
    run_rec *alt = calloc((size_t)runs, sizeof *alt);
    run_stats *st_alt = calloc((size_t)runs, sizeof *st_alt);
    double *moved_alt = calloc((size_t)reps, sizeof *moved_alt);
    char cmp_name[256] = "", *cmp_value = NULL;
    if (compare) {
        snprintf(cmp_name, sizeof cmp_name, "%s", compare);
        cmp_value = strchr(cmp_name, '=');
        *cmp_value++ = '\0';
    }
    double *moved_at = calloc((size_t)reps, sizeof *moved_at);
    if (!on || !off || !st || !moved_at || !alt || !st_alt || !moved_alt)
        return 1;
    int mismatch = 0, ids_lost = 0;
    /* Interleaved, so load drifts hit every arm alike, and in alternating
     * order (with, without[, third] in even runs, the reverse in odd ones),
     * so that neither a drift within a run's arms nor what the arm before
     * left behind (page cache, the host's frequency) favours one arm. */
    int narms = compare ? 3 : 2;
    for (int i = 0; i < runs; i++) {
        for (int k = 0; k < narms; k++) {
            int arm = i % 2 ? narms - 1 - k : k; /* 0 with, 1 without, 2 the third */
            if (run_arm(arm, base, keep, i, arm == 0 ? &on[i] : arm == 1 ? &off[i] : &alt[i],
                        cmp_name, cmp_value) != 0)
                return 1;
        }
        if (on[i].n != off[i].n)
            mismatch++;
        for (int j = 0; j < on[i].n && j < off[i].n; j++)
            mismatch += strcmp(on[i].r[j].checksum, off[i].r[j].checksum) != 0;
        ids_lost += on[i].ids_kept != 1;
        run_statistics(&on[i], reps, moved_at, &st[i]);
        if (compare) {
            for (int j = 0; j < on[i].n && j < alt[i].n; j++)
                mismatch += strcmp(on[i].r[j].checksum, alt[i].r[j].checksum) != 0;
            run_statistics(&alt[i], reps, moved_alt, &st_alt[i]);
        }
        fprintf(stderr, "phases_bench: run %d of %d: total %.3f s with the runtime, %.3f s without\n", i + 1, runs,
                on[i].total_s, off[i].total_s);
    }

    /* instance lengths, without the runtime */
    double *walls = calloc((size_t)runs * MAX_INST, sizeof *walls), *syncs = calloc((size_t)runs * MAX_INST, sizeof *syncs);
    double *calls = calloc((size_t)runs * MAX_INST, sizeof *calls), *gap_on = calloc((size_t)runs * MAX_INST, sizeof *gap_on);
    double *gap_off = calloc((size_t)runs * MAX_INST, sizeof *gap_off);
    size_t nc = 0, ngon = 0, ngoff = 0;
    if (!calls || !gap_on || !gap_off)
        return 1;
    double *ton = calloc((size_t)runs, sizeof *ton), *toff = calloc((size_t)runs, sizeof *toff);
    if (!walls || !syncs || !ton || !toff)
        return 1;
    size_t nw = 0, ns = 0;
    double wmin = INFINITY, smax = 0;
    for (int i = 0; i < runs; i++) {
        for (int j = 0; j < off[i].n; j++) {
            walls[nw++] = off[i].r[j].wall;
            wmin = off[i].r[j].wall < wmin ? off[i].r[j].wall : wmin;
        }
        for (int j = 0; j < off[i].n; j++)
            gap_off[ngoff++] = off[i].r[j].wall / off[i].r[j].task - 1;
        for (int j = 0; j < on[i].n; j++) {
            if (isfinite(on[i].r[j].calls))
                calls[nc++] = on[i].r[j].calls / on[i].r[j].wall;
            gap_on[ngon++] = on[i].r[j].wall / on[i].r[j].task - 1;
            syncs[ns++] = on[i].r[j].sync;
            smax = on[i].r[j].sync > smax ? on[i].r[j].sync : smax;
        }
        ton[i] = on[i].total_s;
        toff[i] = off[i].total_s;
    }
    double wmed = bench_median(walls, nw), smed = bench_median(syncs, ns);
    double mon = bench_median(ton, (size_t)runs), moff = bench_median(toff, (size_t)runs);

    printf("phases_bench: %s, %g MiB (inputs %s of it), %d instances an input visit, %d threads, %d passes, "
           "%d stencil sweeps;\n"
           "  sim backend, fast capacity %.1f MiB (%.0f%%); %d runs with the runtime and %d without, interleaved, in\n"
           "  alternating order\n",
           example, mib, scales, reps, threads, passes, sweeps, capacity / MIB, 100 * fast_frac, runs, runs);
    printf("  instances without the runtime: median %.1f ms, shortest %.1f ms%s\n", 1e3 * wmed, 1e3 * wmin,
           wmin < 0.05 ? " (under 50 ms: raise --passes)" : "");
    printf("  checksums with and without the runtime: %s; object ids kept across reallocation: %s\n",
           mismatch ? "DIFFER" : "identical", ids_lost ? "NO" : "yes");
    printf("\n  %-52s %11s %-18s %20s %-8s %s\n", "statistic (per run; median over runs)", "median",
           "   95% CI", "range over runs",
           "target", "met");
    row("(a) later instances, median |error|: runtime", st, runs, g_later_rt, 100, "%", "< 10%", met_err10);
    row("    naive previous-instance predictor", st, runs, g_later_naive, 100, "%", "", NULL);
    row("    runtime / naive", st, runs, g_ratio, 1, "", "<= 0.75", met_ratio);
    row("    reference: median of the input's previous walls", st, runs, g_later_window, 100, "%", "", NULL);
    row("    ... reference / naive", st, runs, g_ratio_window, 1, "", "", NULL);
    row("    oracle: mean of the visit's other instances", st, runs, g_later_oracle, 100, "%", "", NULL);
    row("    ... oracle / naive (averaging, knowing the visit)", st, runs, g_ratio_oracle, 1, "", "", NULL);
    row("    against the slowest task's time: runtime", st, runs, g_later_rt_task, 100, "%", "< 10%", met_err10);
    row("    ... naive", st, runs, g_later_naive_task, 100, "%", "", NULL);
    row("    ... runtime / naive", st, runs, g_ratio_task, 1, "", "<= 0.75", met_ratio);
    row("(b) first instance of a new input, median |error|", st, runs, g_first, 100, "%", "<= 15%", met_first);
    first_by_input(st, runs);
    row("(c) CV of predictions, unchanged input (worst input)", st, runs, g_cv, 100, "%", "< 10%", met_cv);
    row("    reference: CV of their walls (worst input)", st, runs, g_cv_wall, 100, "%", "", NULL);
    if (overhead_row("(d) overhead: median with / median without - 1", on, off, runs, 1) != 0 ||
        first_instance_split(on, off, runs) != 0)
        return 1;
    row("(e) MiB moved on an unchanged input after warm-up", st, runs, g_moved, 1, "", "0", met_zero);
    int moved_runs = 0;
    for (int i = 0; i < runs; i++)
        moved_runs += st[i].moved_warm > 0;
    printf("      runs that moved pages there: %d of %d (%d sync points each)\n", moved_runs, runs, st[0].nwarm_sync);
    if (compare) {
        printf("\n  with %s (the third arm, interleaved with the two above):\n", compare);
        row("(a) later instances, median |error|", st_alt, runs, g_later_rt, 100, "%", "< 10%", met_err10);
        row("    runtime / naive", st_alt, runs, g_ratio, 1, "", "<= 0.75", met_ratio);
        row("(b) first instance of a new input, median |error|", st_alt, runs, g_first, 100, "%", "<= 15%", met_first);
        first_by_input(st_alt, runs);
        if (runs > 1) /* what one run leaves for the next (PADDISER_PROFILE_STORE) */
            row("    the same, runs 2 .. N", st_alt + 1, runs - 1, g_first, 100, "%", "<= 15%", met_first);
        row("(c) CV of predictions, unchanged input (worst input)", st_alt, runs, g_cv, 100, "%", "< 10%", met_cv);
        row("(e) MiB moved on an unchanged input after warm-up", st_alt, runs, g_moved, 1, "", "0", met_zero);
        int a_better = 0, c_better = 0;
        for (int i = 0; i < runs; i++) {
            a_better += st[i].ratio < st_alt[i].ratio;
            c_better += st[i].cv_worst < st_alt[i].cv_worst;
        }
        printf("  runs where the default did better: (a) ratio %d of %d, (c) %d of %d\n", a_better, runs, c_better,
               runs);
        if (overhead_row("(d) overhead: median with / median without - 1", alt, off, runs, 0) != 0 ||
            first_instance_split(alt, off, runs) != 0)
            return 1;
        /* what one run leaves for the next (PADDISER_PROFILE_STORE) */
        if (runs > 1 && (overhead_row("    the same, runs 2 .. N", alt + 1, off + 1, runs - 1, 0) != 0 ||
                         first_instance_split(alt + 1, off + 1, runs - 1) != 0))
            return 1;
    }
    printf("\n  (d) totals: median %.3f s with the runtime, %.3f s without; range: paired ratios of each run\n",
           mon, moff);
    printf("  sync points: median %.2f ms, max %.2f ms\n", 1e3 * smed, 1e3 * smax);
    printf("  wall time over the slowest task's time - 1, per instance: median %.1f%% with the runtime, %.1f%% "
           "without\n", 100 * bench_median(gap_on, ngon), 100 * bench_median(gap_off, ngoff));
    printf("  inside pd_task_begin / pd_task_end (the most of any thread) per instance: median %.1f%% of the wall\n",
           100 * bench_median(calls, nc));
    double *uns = calloc((size_t)runs, sizeof *uns);
    if (!uns)
        return 1;
    for (int i = 0; i < runs; i++)
        uns[i] = on[i].unsampled;
    printf("  objects with no sampled access in the last instance: median %.0f of %d (phases the profile missed)\n",
           bench_median(uns, (size_t)runs), on[0].objects);
    printf("  (e) MiB moved at the sync point after instance k of a visit (next instance the same input), all runs:");
    for (int k = 0; k + 1 < reps; k++)
        printf(" %d: %.1f", k + 1, moved_at[k] / MIB);
    printf("\n");
    return mismatch || ids_lost ? 1 : 0;
}
