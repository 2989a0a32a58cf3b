/* Planner benchmark: 16..4096 tasks sharing 10^6 pages (4 KiB), skewed
 * sampled access counts, linear-in-r time curves tabulated like the runtime
 * does. Times (one run each, wall clock): building the bytes(r) curves from
 * page counts, tabulating time curves with the default model
 * (pd_time_table_build: one call for all tasks x 21 shares), greedy and
 * exact planning, and choosing the
 * hottest pages within each task's share. `make bench-planner`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/model.h"
#include "lib/page_select.h"
#include "paddiser.h"

#define TOTAL_PAGES 1000000
#define PAGE 4096
#define GRID 21

typedef struct {
    int n;
    pd_bytes_curve *curves;
    pd_time_table *tt;
} bench_ctx;

static double tab_time(void *ctx, int i, double r)
{
    bench_ctx *b = ctx;
    return pd_time_table_cb(b->tt, i, r);
}

static size_t curve_bytes(void *ctx, int i, double r)
{
    bench_ctx *b = ctx;
    return pd_bytes_curve_bytes(&b->curves[i], r);
}

static uint64_t rng_state = 12345;
static uint64_t rng(void)
{
    return pd_splitmix64(&rng_state);
}
static double urand(void) { return (double)(rng() >> 11) / (double)(1ULL << 53); }

int main(void)
{
    char err[256];
    pd_model *model = pd_model_load(NULL, err, sizeof err);
    printf("planner bench: %d pages of %d B in all, capacity 10%% of touched pages, model %s\n", TOTAL_PAGES,
           PAGE, pd_model_source(model));
    printf("%6s %10s %10s %10s %10s %10s %10s %12s %12s\n", "tasks", "curves_ms", "model_ms", "greedy_ms",
           "exact_ms", "select_ms", "pages_sel", "greedy_mk", "exact_mk");
    const int sizes[] = {16, 64, 256, 1024, 4096};
    uint64_t *counts = malloc(TOTAL_PAGES * sizeof *counts);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        size_t per = TOTAL_PAGES / n;
        bench_ctx b = {.n = n, .curves = calloc(n, sizeof *b.curves)};
        pd_task_pages *tp = malloc(n * sizeof *tp);
        double *td = malloc(n * sizeof *td), *ts = malloc(n * sizeof *ts);
        /* Zipf-like counts with a per-task skew; 20% of pages untouched */
        for (int i = 0; i < n; i++) {
            double skew = 0.5 + urand();
            for (size_t p = 0; p < per; p++) {
                size_t idx = (size_t)i * per + p;
                counts[idx] = urand() < 0.2 ? 0 : (uint64_t)(1000.0 / pow(1 + (double)(rng() % per), skew)) + 1;
            }
            tp[i] = (pd_task_pages){counts + (size_t)i * per, per};
            td[i] = 1 + 0.2 * urand();
            ts[i] = td[i] * (1.5 + 2 * urand());
        }
        double t0 = pd_monotonic();
        for (int i = 0; i < n; i++)
            pd_bytes_curve_from_counts(&b.curves[i], tp[i].counts, per, PAGE);
        double t_curves = pd_monotonic() - t0;
        /* all tasks' curves in one model call, 21 shares (the 5% grid) */
        double(*fr)[PD_NFEATURES] = malloc((size_t)n * sizeof *fr);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < PD_NFEATURES; k++)
                fr[i][k] = urand();
        pd_time_table tt;
        t0 = pd_monotonic();
        pd_time_table_build(&tt, model, n, td, ts, (const double(*)[PD_NFEATURES])fr, GRID);
        double t_model = pd_monotonic() - t0;
        free(fr);
        b.tt = &tt;
        size_t touched = 0;
        for (int i = 0; i < n; i++)
            touched += pd_bytes_curve_touched(&b.curves[i]);
        pd_plan_problem prob = {.ntasks = n, .time = tab_time, .bytes = curve_bytes, .ctx = &b,
                                .capacity = touched / 10 * PAGE};
        double *share = malloc(n * sizeof *share), *time = malloc(n * sizeof *time);
        size_t *bytes = malloc(n * sizeof *bytes);
        pd_plan_result res = {.share = share, .bytes = bytes, .time = time};
        t0 = pd_monotonic();
        pd_plan(PD_PLANNER_GREEDY, &prob, 0.05, &res);
        double t_greedy = pd_monotonic() - t0, mk_greedy = res.makespan;
        t0 = pd_monotonic();
        pd_plan(PD_PLANNER_EXACT, &prob, 0.05, &res);
        double t_exact = pd_monotonic() - t0, mk_exact = res.makespan;
        if (getenv("PLANNER_BENCH_DEBUG"))
            for (int i = 0; i < n && i < 16; i++)
                fprintf(stderr, "  task %d share %.4f bytes %zu time %.6f T1 %.6f\n", i, share[i], bytes[i], time[i], tab_time(&b, i, 1));
        size_t **sel = calloc(n, sizeof *sel), *nsel = calloc(n, sizeof *nsel), nsum = 0;
        t0 = pd_monotonic();
        pd_select_plan(tp, n, bytes, PAGE, sel, nsel);
        double t_sel = pd_monotonic() - t0;
        for (int i = 0; i < n; i++) {
            nsum += nsel[i];
            free(sel[i]);
            pd_bytes_curve_free(&b.curves[i]);
        }
        printf("%6d %10.1f %10.1f %10.2f %10.2f %10.1f %10zu %12.6f %12.6f\n", n, t_curves * 1e3, t_model * 1e3,
               t_greedy * 1e3, t_exact * 1e3, t_sel * 1e3, nsum, mk_greedy, mk_exact);
        free(sel);
        free(nsel);
        free(share);
        free(time);
        free(bytes);
        free(b.curves);
        pd_time_table_free(&tt);
        free(tp);
        free(td);
        free(ts);
    }
    free(counts);
    pd_model_free(model);
    return 0;
}
