/* Performance model benchmark: native tree evaluation vs xgboost's C API on
 * the shipped default model (`make bench-model`). Measures, one thread:
 *   - model load from memory (JSON text, and UBJSON): native vs xgboost;
 *   - batch prediction of N rows (default 10^5, 15% missing features):
 *     native (pd_model_raw_predict) vs one XGBoosterPredictFromDense call;
 *   - single-row calls (pd_model_f vs one xgboost call per row);
 *   - pd_time_table_build for 4096 tasks x 21 shares (the runtime's path);
 * and checks that the native and xgboost outputs agree. Best of R runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "common/util.h"
#include "lib/model.h"
#include "lib/model_internal.h"

#define REPS 5

static uint64_t rng = 42;
static double uni(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 53);
}

static double best(double a, double b)
{
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    const char *path = argc > 2 ? argv[2] : PD_SOURCE_DIR "/models/default_model.json";
    char err[512];
    size_t len = 0;
    char *json = pd_read_file(path, &len);
    if (!json || n == 0) {
        fprintf(stderr, "model_bench: cannot read %s\n", path);
        return 1;
    }
    pd_model_xgb_quiet();

    /* load */
    double t_nat = INFINITY, t_xgb = INFINITY, t_ubj = INFINITY;
    pd_model *m = NULL;
    for (int k = 0; k < REPS; k++) {
        pd_model_free(m);
        double t0 = pd_monotonic();
        m = pd_model_load_buffer(json, len, path, err, sizeof err);
        t_nat = best(t_nat, pd_monotonic() - t0);
        if (!m) {
            fprintf(stderr, "model_bench: %s\n", err);
            return 1;
        }
        BoosterHandle b;
        t0 = pd_monotonic();
        if (XGBoosterCreate(NULL, 0, &b) != 0 || XGBoosterLoadModelFromBuffer(b, json, len) != 0)
            return 1;
        t_xgb = best(t_xgb, pd_monotonic() - t0);
        XGBoosterFree(b);
    }
    if (pd_model_save(m, "/tmp/paddiser_model_bench.ubj", err, sizeof err) != PD_OK) {
        fprintf(stderr, "model_bench: %s\n", err);
        return 1;
    }
    size_t ulen = 0;
    char *ubj = pd_read_file("/tmp/paddiser_model_bench.ubj", &ulen);
    remove("/tmp/paddiser_model_bench.ubj");
    for (int k = 0; ubj && k < REPS; k++) {
        double t0 = pd_monotonic();
        pd_model *u = pd_model_load_buffer(ubj, ulen, "ubj", err, sizeof err);
        t_ubj = best(t_ubj, pd_monotonic() - t0);
        pd_model_free(u);
    }
    printf("model %s: %zu trees, %zu nodes, depth %d, JSON %zu bytes, UBJSON %zu bytes\n", path,
           m->forest.ntrees, m->forest.nnodes, m->forest.max_depth, len, ulen);
    printf("load (JSON):   native %8.2f ms   xgboost %8.2f ms\n", 1e3 * t_nat, 1e3 * t_xgb);
    printf("load (UBJSON): native %8.2f ms\n", 1e3 * t_ubj);

    /* batch prediction */
    float *rows = malloc(n * PD_MODEL_NINPUTS * sizeof *rows);
    float *ref = malloc(n * sizeof *ref);
    double *nat = malloc(n * sizeof *nat);
    if (!rows || !ref || !nat)
        return 1;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < PD_MODEL_NINPUTS; k++)
            rows[i * PD_MODEL_NINPUTS + k] = k < PD_NFEATURES && uni() < 0.15 ? NAN
                                             : (float)(uni() * (k == 0 ? 40 : 1.2));
    void *b = pd_model_xgb_booster(m, err, sizeof err);
    if (!b) {
        fprintf(stderr, "model_bench: %s\n", err);
        return 1;
    }
    double p_nat = INFINITY, p_xgb = INFINITY;
    for (int k = 0; k < REPS; k++) {
        double t0 = pd_monotonic();
        pd_model_raw_predict(m, rows, n, nat);
        p_nat = best(p_nat, pd_monotonic() - t0);
        t0 = pd_monotonic();
        if (pd_model_xgb_predict(b, rows, n, ref) != PD_OK)
            return 1;
        p_xgb = best(p_xgb, pd_monotonic() - t0);
    }
    size_t exact = 0;
    double maxrel = 0;
    for (size_t i = 0; i < n; i++) {
        exact += (float)nat[i] == ref[i];
        double rel = fabs(nat[i] - ref[i]) / fmax(1.0, fabs(ref[i]));
        if (rel > maxrel)
            maxrel = rel;
    }
    printf("batch of %zu rows: native %8.2f ms (%.3g rows/s)   xgboost %8.2f ms (%.3g rows/s)   speedup %.1fx\n",
           n, 1e3 * p_nat, n / p_nat, 1e3 * p_xgb, n / p_xgb, p_xgb / p_nat);
    printf("agreement: %zu of %zu bit-identical, max relative difference %.3g\n", exact, n, maxrel);

    /* single-row calls: what one pd_model_f costs */
    size_t ns = n < 20000 ? n : 20000;
    double s_nat = INFINITY, s_xgb = INFINITY, sink = 0;
    for (int k = 0; k < REPS; k++) {
        double t0 = pd_monotonic();
        for (size_t i = 0; i < ns; i++) {
            double f;
            pd_model_raw_predict(m, rows + i * PD_MODEL_NINPUTS, 1, &f);
            sink += f;
        }
        s_nat = best(s_nat, pd_monotonic() - t0);
        t0 = pd_monotonic();
        for (size_t i = 0; i < ns; i++) {
            float f;
            pd_model_xgb_predict(b, rows + i * PD_MODEL_NINPUTS, 1, &f);
            sink += f;
        }
        s_xgb = best(s_xgb, pd_monotonic() - t0);
    }
    printf("single-row calls: native %8.3f us/call   xgboost %8.3f us/call   (checksum %g)\n", 1e6 * s_nat / ns,
           1e6 * s_xgb / ns, sink);
    XGBoosterFree(b);

    /* the runtime's tabulation: every task's curve at 21 shares */
    enum { TASKS = 4096, POINTS = 21 };
    static double td[TASKS], ts[TASKS], feat[TASKS][PD_NFEATURES];
    for (int i = 0; i < TASKS; i++) {
        td[i] = 1 + uni();
        ts[i] = td[i] * (1.5 + 2 * uni());
        for (int k = 0; k < PD_NFEATURES; k++)
            feat[i][k] = rows[(size_t)(i % n) * PD_MODEL_NINPUTS + k];
    }
    double t_tab = INFINITY;
    for (int k = 0; k < REPS; k++) {
        pd_time_table tt;
        double t0 = pd_monotonic();
        if (pd_time_table_build(&tt, m, TASKS, td, ts, (const double(*)[PD_NFEATURES])feat, POINTS) != PD_OK)
            return 1;
        t_tab = best(t_tab, pd_monotonic() - t0);
        pd_time_table_free(&tt);
    }
    printf("pd_time_table_build %d tasks x %d shares: %.2f ms\n", TASKS, POINTS, 1e3 * t_tab);
    pd_model_free(m);
    free(rows);
    free(ref);
    free(nat);
    free(json);
    free(ubj);
    return 0;
}
