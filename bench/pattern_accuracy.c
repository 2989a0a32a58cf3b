/* Eq. 1 by access pattern (issue #11 item 2, "a per-pattern accuracy
 * table"): how well the runtime predicts the first instance of a new input
 * from one base input, for one kernel per pattern, and how well it predicts
 * the later instances once it has the new input's own times.
 *
 * One task (this thread, between pd_task_begin and pd_task_end), no backend
 * (one memory: the prediction is Eq. 1's scale of the task's time, nothing
 * of Eq. 2's placement), sampling on as shipped. Each kernel's objects are
 * registered by name with the kernel's hint, as docs/runtime.md tells a
 * user to. For every pair of inputs (base, new) a fresh runtime runs REPS
 * instances of the base, then unregisters, frees, allocates the new input
 * and registers its objects again under their names (they keep their
 * history), a sync point, and REPS instances of the new input. Per
 * instance: the makespan pd_plan_query predicted before it and the task's
 * measured time. Every instance does the same number of passes, so work
 * grows with the input as Eq. 1 assumes (an index array or graph that grows
 * with its vector).
 *
 * Kernels (footprint: all objects of the input):
 *   stream    s += a[i]                                a: stream, 8 B
 *   stride    s += a[8 i]  (one element a line)         a: stride 8, 8 B
 *   stencil   b[i] = 5-point sum of a around i          a: stencil, b: stream
 *   random    s += x[idx[i]], idx uniform in x          idx: stream 4 B, x: random
 *   unhinted  the same, x registered without a hint     (what Eq. 1 does without the hint)
 * The random kernels' sizes are x's bytes (the part the cache table reads).
 *
 * Prints, per kernel and pair, the measured growth (the new input's median
 * time over the base's, from each input's second instance on), the runtime's
 * predicted growth (its first prediction of the new input over the base's
 * median), the first instance's signed error, and over the later instances
 * of the new input the runtime's median |error| and the naive predictor's
 * (the previous instance); each the median over runs. A benchmark: the
 * numbers depend on this machine (its LLC, its noise), not a test.
 *
 *   make bench-pattern-accuracy [PATTERN_ACCURACY_ARGS="--runs 5"]
 * Options: --runs N (default 3), --reps K (instances per input, default 4),
 * --kernels LIST (default stream,stride,stencil,random,unhinted). */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "common/util.h"
#include "paddiser.h"

#define MIB (1024.0 * 1024.0)
#define MAX_RUNS 64
#define MAX_REPS 32
#define PASS_ELEMS (32u << 20) /* element accesses of the base input's instance */
#define STENCIL_COLS 1024      /* 8 KiB rows: three stay in cache, as the stencil table assumes */

enum { K_STREAM, K_STRIDE, K_STENCIL, K_RANDOM, K_UNHINTED, NKERNELS };
static const char *const kernel_name[NKERNELS] = {"stream", "stride", "stencil", "random", "unhinted"};

/* Pairs of inputs in MiB: footprints for the streaming kernels (well past
 * a 32 MiB LLC), x's bytes for the random ones (across the LLC). */
static const double pairs_streaming[][2] = {{64, 128}, {128, 256}, {64, 256}};
static const double pairs_random[][2] = {{4, 8}, {8, 16}, {16, 32}, {32, 64}};

typedef struct {
    size_t n; /* elements of a / x (the stencil: rows * STENCIL_COLS) */
    double *a, *b;
    uint32_t *idx;
    int ids[2];
} input_t;

static void *alloc_pages(size_t bytes)
{
    return aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}

static void input_free(input_t *in)
{
    free(in->a);
    free(in->b);
    free(in->idx);
    in->a = in->b = NULL;
    in->idx = NULL;
}

/* Allocates and fills the input of `mib` for kernel k; 0 or -1. */
static int input_alloc(int k, double mib, input_t *in)
{
    memset(in, 0, sizeof *in);
    in->ids[0] = in->ids[1] = -1; /* nothing registered yet */
    size_t bytes = (size_t)(mib * MIB);
    switch (k) {
    case K_STREAM:
    case K_STRIDE:
        in->n = bytes / sizeof(double);
        in->a = alloc_pages(in->n * sizeof(double));
        break;
    case K_STENCIL:
        in->n = bytes / 2 / sizeof(double) / STENCIL_COLS * STENCIL_COLS;
        in->a = alloc_pages(in->n * sizeof(double));
        in->b = alloc_pages(in->n * sizeof(double));
        break;
    default:
        in->n = bytes / sizeof(double);
        in->a = alloc_pages(in->n * sizeof(double));
        in->idx = alloc_pages(in->n * sizeof(uint32_t));
        break;
    }
    if (!in->a || (k == K_STENCIL && !in->b) || (k >= K_RANDOM && !in->idx)) {
        input_free(in);
        return -1;
    }
    for (size_t i = 0; i < in->n; i++)
        in->a[i] = (double)(i & 7);
    if (in->b)
        memset(in->b, 0, in->n * sizeof(double));
    uint64_t s = 0x9E3779B97F4A7C15ull ^ in->n;
    for (size_t i = 0; in->idx && i < in->n; i++)
        in->idx[i] = (uint32_t)(pd_splitmix64(&s) % in->n);
    return 0;
}

/* Registers the input's objects under the kernel's names and hints; 0 or -1. */
static int input_register(int k, input_t *in)
{
    const pd_access_hint stream8 = {PD_PATTERN_STREAM, 8, 1, 0}, stream4 = {PD_PATTERN_STREAM, 4, 1, 0};
    const pd_access_hint stride8 = {PD_PATTERN_STRIDE, 8, 8, 0}, stencil = {PD_PATTERN_STENCIL, 8, 1, 0};
    const pd_access_hint random8 = {PD_PATTERN_RANDOM, 8, 1, 0}, unknown = {PD_PATTERN_UNKNOWN, 8, 1, 0};
    size_t db = in->n * sizeof(double);
    in->ids[0] = in->ids[1] = -1;
    switch (k) {
    case K_STREAM: in->ids[0] = pd_object_register("a", in->a, db, &stream8); break;
    case K_STRIDE: in->ids[0] = pd_object_register("a", in->a, db, &stride8); break;
    case K_STENCIL:
        in->ids[0] = pd_object_register("grid", in->a, db, &stencil);
        in->ids[1] = pd_object_register("out", in->b, db, &stream8);
        break;
    default:
        in->ids[0] = pd_object_register("x", in->a, db, k == K_RANDOM ? &random8 : &unknown);
        in->ids[1] = pd_object_register("idx", in->idx, in->n * sizeof(uint32_t), &stream4);
        break;
    }
    int want = k == K_STREAM || k == K_STRIDE ? 1 : 2;
    for (int i = 0; i < want; i++)
        if (in->ids[i] < 0) {
            fprintf(stderr, "pattern_accuracy: pd_object_register: %s\n", pd_strerror(in->ids[i]));
            return -1;
        }
    return 0;
}

static void input_unregister(input_t *in)
{
    for (int i = 0; i < 2; i++)
        if (in->ids[i] >= 0)
            pd_object_unregister(in->ids[i]);
}

static volatile double sink;

/* One pass of kernel k over the input. */
static void kernel_pass(int k, const input_t *in)
{
    double s = 0;
    size_t n = in->n;
    switch (k) {
    case K_STREAM:
        for (size_t i = 0; i < n; i++)
            s += in->a[i];
        break;
    case K_STRIDE:
        for (size_t i = 0; i < n; i += 8)
            s += in->a[i];
        break;
    case K_STENCIL:
        for (size_t i = STENCIL_COLS; i + STENCIL_COLS < n; i++)
            in->b[i] = in->a[i - STENCIL_COLS] + in->a[i + STENCIL_COLS] + in->a[i - 1] + in->a[i + 1] -
                       4 * in->a[i];
        s = in->b[n / 2];
        break;
    default:
        for (size_t i = 0; i < n; i++)
            s += in->a[in->idx[i]];
        break;
    }
    sink = s;
}

/* One instance: the task's time, or a negative value on a runtime error. */
static double run_instance(int k, const input_t *in, int passes)
{
    if (pd_task_begin(0) != PD_OK)
        return -1;
    double t0 = pd_monotonic();
    for (int p = 0; p < passes; p++)
        kernel_pass(k, in);
    double t = pd_monotonic() - t0;
    if (pd_task_end(0) != PD_OK)
        return -1;
    return t;
}

typedef struct {
    double growth, predicted_growth, first_err, later_rt, later_naive;
} pair_result;

/* One pair (base, new) of kernel k in a fresh runtime; 0 or -1. */
static int run_pair(int k, double base_mib, double new_mib, int reps, pair_result *out)
{
    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_NONE;
    int rc = pd_init(&opt);
    if (rc != PD_OK) {
        fprintf(stderr, "pattern_accuracy: pd_init: %s\n", pd_strerror(rc));
        return -1;
    }
    input_t in;
    double t_base[MAX_REPS], t_new[MAX_REPS], p_new[MAX_REPS];
    if (input_alloc(k, base_mib, &in) != 0 || input_register(k, &in) != 0) {
        fprintf(stderr, "pattern_accuracy: cannot set up %s at %g MiB\n", kernel_name[k], base_mib);
        input_free(&in);
        pd_finalize();
        return -1;
    }
    int passes = (int)((PASS_ELEMS + in.n - 1) / in.n);
    for (int i = 0; i < 2 * reps && rc == PD_OK; i++) {
        int side = i >= reps, r = i % reps;
        double mk = NAN;
        pd_task_plan plan[1];
        if (side && (pd_plan_query(plan, 1, &mk) < 1 || !isfinite(mk))) {
            fprintf(stderr, "pattern_accuracy: pd_plan_query gave no prediction for the new input\n");
            rc = -1;
            break;
        }
        if (side && getenv("PATTERN_ACCURACY_DEBUG")) {
            pd_task_profile tp;
            if (pd_task_profile_get(0, &tp) == PD_OK)
                fprintf(stderr, "  %s %g -> %g [%d]: predicted %.4f (from %d, same input %d), base %.4f, last %.4f\n",
                        kernel_name[k], base_mib, new_mib, r, mk, plan[0].predicted_from, plan[0].same_input,
                        tp.base_time, tp.last_time);
        }
        double t = run_instance(k, &in, passes);
        if (t < 0) {
            fprintf(stderr, "pattern_accuracy: pd_task_begin or pd_task_end failed\n");
            rc = -1;
            break;
        }
        (side ? t_new : t_base)[r] = t;
        if (side)
            p_new[r] = mk;
        /* after the base's last instance, the new input: its objects
         * unregistered, freed, allocated and registered again under their
         * names before the sync point, as a program between inputs */
        if (i == reps - 1) {
            input_unregister(&in);
            input_free(&in);
            if (input_alloc(k, new_mib, &in) != 0 || input_register(k, &in) != 0) {
                fprintf(stderr, "pattern_accuracy: cannot set up %s at %g MiB\n", kernel_name[k], new_mib);
                rc = -1;
                break;
            }
        }
        if ((rc = pd_sync_point()) != PD_OK)
            fprintf(stderr, "pattern_accuracy: pd_sync_point: %s\n", pd_strerror(rc));
    }
    input_unregister(&in);
    input_free(&in);
    pd_finalize();
    if (rc != PD_OK)
        return -1;
    /* each input's level from its second instance on (the first of a run
     * is sampled whole, the new input's first runs cold) */
    double tb[MAX_REPS], tn[MAX_REPS], er[MAX_REPS], en[MAX_REPS];
    memcpy(tb, t_base + 1, (size_t)(reps - 1) * sizeof *tb);
    memcpy(tn, t_new + 1, (size_t)(reps - 1) * sizeof *tn);
    double base = bench_median(tb, (size_t)reps - 1), level = bench_median(tn, (size_t)reps - 1);
    out->growth = level / base;
    out->predicted_growth = p_new[0] / base;
    out->first_err = p_new[0] / t_new[0] - 1;
    size_t m = 0;
    for (int r = 1; r < reps; r++, m++) {
        er[m] = fabs(p_new[r] / t_new[r] - 1);
        en[m] = fabs(t_new[r - 1] / t_new[r] - 1);
    }
    out->later_rt = bench_median(er, m);
    out->later_naive = bench_median(en, m);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pattern_accuracy [--runs N] [--reps K] [--kernels LIST]\n"
               "  --runs N        fresh runtimes per kernel and pair (default 3, at most %d)\n"
               "  --reps K        instances of each input (default 4, 3 .. %d)\n"
               "  --kernels LIST  of stream,stride,stencil,random,unhinted (default all)\n",
            MAX_RUNS, MAX_REPS);
}

int main(int argc, char **argv)
{
    int runs = 3, reps = 4;
    const char *kernels = "stream,stride,stencil,random,unhinted";
    static const struct option longopts[] = {
        {"runs", required_argument, NULL, 'r'},
        {"reps", required_argument, NULL, 'k'},
        {"kernels", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': runs = atoi(optarg); break;
        case 'k': reps = atoi(optarg); break;
        case 'K': kernels = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    int want[NKERNELS] = {0}, any = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", kernels);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int k = 0; k < NKERNELS; k++)
            if (strcmp(tok, kernel_name[k]) == 0)
                want[k] = found = any = 1;
        if (!found) {
            fprintf(stderr, "pattern_accuracy: unknown kernel '%s'\n", tok);
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || runs < 1 || runs > MAX_RUNS || reps < 3 || reps > MAX_REPS || !any) {
        usage(stderr);
        return 2;
    }
    setenv("PADDISER_QUIET", "1", 1);
    printf("pattern_accuracy: one task, no backend, %d runs of every pair, %d instances an input\n", runs, reps);
    printf("  %-9s %-11s %9s %9s %14s %10s %10s\n", "kernel", "MiB", "growth", "predicted", "first error",
           "later |e|", "naive |e|");
    for (int k = 0; k < NKERNELS; k++) {
        if (!want[k])
            continue;
        int random = k >= K_RANDOM;
        size_t npairs = random ? sizeof pairs_random / sizeof pairs_random[0]
                               : sizeof pairs_streaming / sizeof pairs_streaming[0];
        double all_first[MAX_RUNS * 8];
        size_t nall = 0;
        for (size_t p = 0; p < npairs; p++) {
            const double *pair = random ? pairs_random[p] : pairs_streaming[p];
            double g[MAX_RUNS], pg[MAX_RUNS], fe[MAX_RUNS], lr[MAX_RUNS], ln[MAX_RUNS];
            int ok = 0;
            for (int r = 0; r < runs; r++) {
                pair_result res;
                if (run_pair(k, pair[0], pair[1], reps, &res) != 0)
                    return 1;
                g[ok] = res.growth;
                pg[ok] = res.predicted_growth;
                fe[ok] = res.first_err;
                lr[ok] = res.later_rt;
                ln[ok] = res.later_naive;
                all_first[nall++] = fabs(res.first_err);
                ok++;
            }
            char mib[32];
            snprintf(mib, sizeof mib, "%g -> %g", pair[0], pair[1]);
            printf("  %-9s %-11s %8.2fx %8.2fx %+13.1f%% %9.1f%% %9.1f%%\n", kernel_name[k], mib,
                   bench_median(g, (size_t)ok), bench_median(pg, (size_t)ok), 100 * bench_median(fe, (size_t)ok),
                   100 * bench_median(lr, (size_t)ok), 100 * bench_median(ln, (size_t)ok));
        }
        printf("  %-9s %-11s first instance, median |error| over pairs and runs: %.1f%%\n", kernel_name[k], "all",
               100 * bench_median(all_first, nall));
    }
    return 0;
}
