/* Training side of the performance model (see docs/model.md): the training
 * CSV, the regression target, xgboost training, saving, held-out metrics,
 * and the synthetic code-region generator behind the provisional default
 * model. The only file that calls xgboost; prediction is native
 * (model.c, model_forest.c) and never needs it. */
#include <errno.h>
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <xgboost/c_api.h>

#include "common/csv.h"
#include "common/util.h"
#include "lib/model.h"
#include "lib/model_internal.h"
#include "paddiser.h"

/* ---- xgboost helpers ------------------------------------------------------ */

static pthread_once_t quiet_once = PTHREAD_ONCE_INIT;
static void xgb_quiet(void)
{
    XGBSetGlobalConfig("{\"verbosity\": 0}");
}

void pd_model_xgb_quiet(void)
{
    pthread_once(&quiet_once, xgb_quiet);
}

const char *pd_model_xgb_error(char *buf, size_t len)
{
    const char *e = XGBGetLastError();
    if (!e)
        e = "unknown error";
    if (e[0] == '[') { /* "[12:00:00] file.cc:12: message": keep the message */
        const char *p = strchr(e, ']');
        const char *q = p ? strstr(p, ": ") : NULL;
        if (q)
            e = q + 2;
    }
    size_t n = strcspn(e, "\n");
    if (n >= len)
        n = len - 1;
    memcpy(buf, e, n);
    buf[n] = '\0';
    return buf;
}

void *pd_model_xgb_booster(const pd_model *m, char *err, size_t errlen)
{
    if (!m || m->fallback || !m->blob) {
        snprintf(err, errlen, "%s", m ? "the fallback model has no trees" : "no model");
        return NULL;
    }
    pd_model_xgb_quiet();
    BoosterHandle b = NULL;
    if (XGBoosterCreate(NULL, 0, &b) != 0 || XGBoosterLoadModelFromBuffer(b, m->blob, m->blob_len) != 0) {
        char xe[256];
        snprintf(err, errlen, "xgboost: %s", pd_model_xgb_error(xe, sizeof xe));
        if (b)
            XGBoosterFree(b);
        return NULL;
    }
    XGBoosterSetParam(b, "nthread", "1");
    return b;
}

int pd_model_xgb_predict(void *booster, const float *rows, size_t n, float *out)
{
    if (n == 0)
        return PD_OK;
    char iface[160];
    snprintf(iface, sizeof iface,
             "{\"data\": [%lu, true], \"shape\": [%zu, %d], \"typestr\": \"<f4\", \"version\": 3}",
             (unsigned long)(uintptr_t)rows, n, PD_MODEL_NINPUTS);
    const char *cfg = "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
                      "\"strict_shape\": false, \"cache_id\": 0, \"missing\": NaN}";
    const bst_ulong *shape = NULL;
    bst_ulong dim = 0;
    const float *res = NULL;
    if (XGBoosterPredictFromDense(booster, iface, cfg, NULL, &shape, &dim, &res) != 0)
        return PD_EIO;
    memcpy(out, res, n * sizeof *out);
    return PD_OK;
}

int pd_model_save(const pd_model *m, const char *path, char *err, size_t errlen)
{
    if (!m || m->fallback || !path) {
        snprintf(err, errlen, "nothing to save: %s", m ? "the fallback model has no trees" : "no model");
        return PD_EINVAL;
    }
    size_t n = strlen(path);
    int json = n >= 5 && !strcmp(path + n - 5, ".json");
    BoosterHandle b = pd_model_xgb_booster(m, err, errlen);
    if (!b)
        return PD_EIO;
    bst_ulong len = 0;
    const char *buf = NULL;
    int rc = PD_OK;
    if (XGBoosterSaveModelToBuffer(b, json ? "{\"format\": \"json\"}" : "{\"format\": \"ubj\"}", &len, &buf) != 0) {
        char xe[256];
        snprintf(err, errlen, "xgboost: %s", pd_model_xgb_error(xe, sizeof xe));
        rc = PD_EIO;
    } else if (pd_write_file_atomic(path, buf, len) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = PD_EIO;
    }
    XGBoosterFree(b);
    return rc;
}

/* ---- data ---------------------------------------------------------------- */

void pd_model_data_free(pd_model_data *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        if (d->region)
            free(d->region[i]);
        if (d->placement)
            free(d->placement[i]);
    }
    free(d->region);
    free(d->placement);
    free(d->feat);
    free(d->r);
    free(d->t_dram);
    free(d->t_slow);
    free(d->t_hybrid);
    memset(d, 0, sizeof *d);
}

/* A finite number (blanks around it are fine); with allow_missing, an empty
 * cell, "nan" or "na" is NaN. The whole cell counts, however long. */
static int parse_cell(const char *s, int allow_missing, double *out)
{
    if (!s)
        return 0;
    const char *b = s, *e = s + strlen(s);
    while (b < e && isspace((unsigned char)*b))
        b++;
    while (e > b && isspace((unsigned char)e[-1]))
        e--;
    size_t n = (size_t)(e - b);
    if (allow_missing && (n == 0 || ((n == 3 || n == 2) && !strncasecmp(b, "nan", n)))) {
        *out = NAN;
        return 1;
    }
    return pd_parse_double(s, out) && isfinite(*out);
}

int pd_model_data_load(const char *path, pd_model_data *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    pd_csv *csv = pd_csv_load(path, err, errlen);
    if (!csv)
        return PD_EIO;
    static const char *const timecols[] = {"r", "t_dram", "t_slow", "t_hybrid"};
    int cf[PD_NFEATURES], ct[4];
    int creg = pd_csv_col(csv, "region"), cpl = pd_csv_col(csv, "placement");
    for (int k = 0; k < PD_NFEATURES; k++)
        cf[k] = pd_csv_col(csv, pd_model_input_names[k]);
    for (int k = 0; k < 4; k++)
        ct[k] = pd_csv_col(csv, timecols[k]);
    const char *missing = creg < 0 ? "region" : cpl < 0 ? "placement" : NULL;
    for (int k = 0; !missing && k < PD_NFEATURES; k++)
        if (cf[k] < 0)
            missing = pd_model_input_names[k];
    for (int k = 0; !missing && k < 4; k++)
        if (ct[k] < 0)
            missing = timecols[k];
    if (missing) {
        snprintf(err, errlen, "%s: no column '%s' (want %s)", path, missing, PD_MODEL_CSV_HEADER);
        pd_csv_free(csv);
        return PD_EINVAL;
    }
    size_t n = csv->nrows;
    d->region = calloc(n ? n : 1, sizeof *d->region);
    d->placement = calloc(n ? n : 1, sizeof *d->placement);
    d->feat = calloc(n ? n : 1, sizeof *d->feat);
    d->r = calloc(n ? n : 1, sizeof *d->r);
    d->t_dram = calloc(n ? n : 1, sizeof *d->t_dram);
    d->t_slow = calloc(n ? n : 1, sizeof *d->t_slow);
    d->t_hybrid = calloc(n ? n : 1, sizeof *d->t_hybrid);
    if (!d->region || !d->placement || !d->feat || !d->r || !d->t_dram || !d->t_slow || !d->t_hybrid) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        d->n = i + 1; /* what to free on failure */
        const char *reg = pd_csv_get(csv, i, creg), *pl = pd_csv_get(csv, i, cpl);
        d->region[i] = pd_strdup(reg ? reg : "");
        d->placement[i] = pd_strdup(pl ? pl : "");
        if (!d->region[i] || !d->placement[i]) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (int k = 0; k < PD_NFEATURES; k++)
            if (!parse_cell(pd_csv_get(csv, i, cf[k]), 1, &d->feat[i][k])) {
                snprintf(err, errlen, "%s: row %zu: column %s: '%s' is not a number", path, i + 2,
                         pd_model_input_names[k], pd_csv_get(csv, i, cf[k]) ? pd_csv_get(csv, i, cf[k]) : "");
                goto fail;
            }
        double *dst[4] = {&d->r[i], &d->t_dram[i], &d->t_slow[i], &d->t_hybrid[i]};
        for (int k = 0; k < 4; k++)
            if (!parse_cell(pd_csv_get(csv, i, ct[k]), 0, dst[k])) {
                snprintf(err, errlen, "%s: row %zu: column %s: '%s' is not a number", path, i + 2, timecols[k],
                         pd_csv_get(csv, i, ct[k]) ? pd_csv_get(csv, i, ct[k]) : "");
                goto fail;
            }
        if (d->r[i] < 0 || d->r[i] > 1) {
            snprintf(err, errlen, "%s: row %zu: r = %g is not a share in [0, 1]", path, i + 2, d->r[i]);
            goto fail;
        }
        if (d->t_dram[i] < 0 || d->t_slow[i] < 0 || d->t_hybrid[i] < 0) {
            snprintf(err, errlen, "%s: row %zu: negative time", path, i + 2);
            goto fail;
        }
    }
    d->n = n;
    pd_csv_free(csv);
    return PD_OK;
fail:
    pd_csv_free(csv);
    pd_model_data_free(d);
    return PD_EINVAL;
}

int pd_model_data_write(pd_str *out, const pd_model_data *d, const unsigned char *use)
{
    pd_str_append(out, PD_MODEL_CSV_HEADER "\n");
    for (size_t i = 0; i < d->n; i++) {
        if (use && !use[i])
            continue;
        pd_csv_put_field(out, d->region[i]);
        pd_str_append(out, ",");
        pd_csv_put_field(out, d->placement[i]);
        for (int k = 0; k < PD_NFEATURES; k++) {
            /* %.17g round-trips every double: a written split trains exactly as the original rows */
            if (isnan(d->feat[i][k]))
                pd_str_append(out, ",");
            else
                pd_str_printf(out, ",%.17g", d->feat[i][k]);
        }
        pd_str_printf(out, ",%.17g,%.17g,%.17g,%.17g\n", d->r[i], d->t_dram[i], d->t_slow[i], d->t_hybrid[i]);
    }
    return out->oom ? PD_ENOMEM : PD_OK;
}

double pd_model_target_f(double r, double t_dram, double t_slow, double t_hybrid)
{
    if (!(r > 0) || !isfinite(t_dram) || !isfinite(t_slow) || !isfinite(t_hybrid) || !(t_slow > t_dram))
        return NAN;
    return (t_slow - t_hybrid) / ((t_slow - t_dram) * r);
}

static int row_usable(const pd_model_data *d, const unsigned char *use, size_t i)
{
    return (!use || use[i]) && isfinite(pd_model_target_f(d->r[i], d->t_dram[i], d->t_slow[i], d->t_hybrid[i]));
}

static void row_inputs(const pd_model_data *d, size_t i, float *row)
{
    for (int k = 0; k < PD_NFEATURES; k++)
        row[k] = (float)d->feat[i][k];
    row[PD_NFEATURES] = (float)d->r[i];
}

/* ---- training -------------------------------------------------------------- */

pd_model *pd_model_train(const pd_model_data *d, const unsigned char *use, const pd_model_train_opts *opt,
                         char *err, size_t errlen)
{
    pd_model_train_opts o = {0};
    if (opt)
        o = *opt;
    if (o.rounds <= 0)
        o.rounds = 150;
    if (o.max_depth <= 0)
        o.max_depth = 4;
    if (!(o.eta > 0))
        o.eta = 0.1;
    if (o.nthread <= 0)
        o.nthread = 1;
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += row_usable(d, use, i);
    if (n < 2) {
        snprintf(err, errlen, "too few training rows with r > 0 and t_slow > t_dram (%zu)", n);
        return NULL;
    }
    float *x = malloc(n * PD_MODEL_NINPUTS * sizeof *x);
    float *y = malloc(n * sizeof *y), *wt = malloc(n * sizeof *wt);
    if (!x || !y || !wt) {
        free(x);
        free(y);
        free(wt);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t j = 0;
    for (size_t i = 0; i < d->n; i++)
        if (row_usable(d, use, i)) {
            row_inputs(d, i, x + j * PD_MODEL_NINPUTS);
            y[j] = (float)pd_model_target_f(d->r[i], d->t_dram[i], d->t_slow[i], d->t_hybrid[i]);
            /* f's error reaches T scaled by r (T_slow - T_dram) / T: weigh rows
             * by its square, so that noisy small-r targets count less */
            double g = d->r[i] * (d->t_slow[i] - d->t_dram[i]) / (d->t_hybrid[i] > 0 ? d->t_hybrid[i] : 1);
            wt[j++] = (float)(g * g);
        }
    double wsum = 0;
    for (size_t k = 0; k < n; k++)
        wsum += wt[k];
    for (size_t k = 0; k < n; k++) /* mean 1: min_child_weight keeps its meaning */
        wt[k] = wsum > 0 ? (float)(wt[k] * (double)n / wsum) : 1.0f;
    pd_model_xgb_quiet();
    DMatrixHandle dm = NULL;
    BoosterHandle b = NULL;
    int ok = XGDMatrixCreateFromMat(x, n, PD_MODEL_NINPUTS, NAN, &dm) == 0 &&
             XGDMatrixSetFloatInfo(dm, "label", y, n) == 0 && XGDMatrixSetFloatInfo(dm, "weight", wt, n) == 0 &&
             XGDMatrixSetStrFeatureInfo(dm, "feature_name", (const char **)pd_model_input_names, PD_MODEL_NINPUTS) == 0 &&
             XGBoosterCreate(&dm, 1, &b) == 0;
    char buf[32];
    struct {
        const char *k;
        const char *v;
    } params[] = {{"objective", "reg:squarederror"}, {"tree_method", "hist"}, {"max_depth", NULL},
                  {"eta", NULL}, {"nthread", NULL}, {"seed", NULL}};
    for (size_t p = 0; ok && p < PD_ARRAY_LEN(params); p++) {
        const char *v = params[p].v;
        if (!v) {
            if (p == 2)
                snprintf(buf, sizeof buf, "%d", o.max_depth);
            else if (p == 3)
                snprintf(buf, sizeof buf, "%g", o.eta);
            else if (p == 4)
                snprintf(buf, sizeof buf, "%d", o.nthread);
            else
                snprintf(buf, sizeof buf, "%u", o.seed);
            v = buf;
        }
        ok = XGBoosterSetParam(b, params[p].k, v) == 0;
    }
    for (int it = 0; ok && it < o.rounds; it++)
        ok = XGBoosterUpdateOneIter(b, it, dm) == 0;
    if (!ok) {
        char xe[256];
        snprintf(err, errlen, "xgboost: %s", pd_model_xgb_error(xe, sizeof xe));
    }
    if (dm)
        XGDMatrixFree(dm);
    free(x);
    free(y);
    free(wt);
    if (!ok) {
        if (b)
            XGBoosterFree(b);
        return NULL;
    }
    /* saved with the model: documents its inputs */
    XGBoosterSetStrFeatureInfo(b, "feature_name", (const char **)pd_model_input_names, PD_MODEL_NINPUTS);
    /* the trained model is its saved JSON, predicted natively like any other */
    bst_ulong len = 0;
    const char *json = NULL;
    pd_model *m = NULL;
    if (XGBoosterSaveModelToBuffer(b, "{\"format\": \"json\"}", &len, &json) != 0) {
        char xe[256];
        snprintf(err, errlen, "xgboost: %s", pd_model_xgb_error(xe, sizeof xe));
    } else
        m = pd_model_from_buffer(json, len, "trained", err, errlen);
    XGBoosterFree(b);
    return m;
}

/* ---- evaluation ------------------------------------------------------------ */

int pd_model_evaluate(const pd_model *m, const pd_model_data *d, const unsigned char *use, pd_model_metrics *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += row_usable(d, use, i) && d->t_hybrid[i] > 0;
    if (n == 0)
        return PD_EINVAL;
    float *x = malloc(n * PD_MODEL_NINPUTS * sizeof *x);
    double *f = malloc(n * sizeof *f);
    if (!x || !f) {
        free(x);
        free(f);
        return PD_ENOMEM;
    }
    size_t j = 0;
    for (size_t i = 0; i < d->n; i++)
        if (row_usable(d, use, i) && d->t_hybrid[i] > 0)
            row_inputs(d, i, x + j++ * PD_MODEL_NINPUTS);
    pd_model_raw_predict(m, x, n, f);
    double mean_f = 0;
    j = 0;
    for (size_t i = 0; i < d->n; i++)
        if (row_usable(d, use, i) && d->t_hybrid[i] > 0)
            mean_f += pd_model_target_f(d->r[i], d->t_dram[i], d->t_slow[i], d->t_hybrid[i]);
    mean_f /= (double)n;
    double ss_tot = 0, ss_res = 0, ss_lin = 0, ape = 0, ape_lin = 0;
    for (size_t i = 0; i < d->n; i++) {
        if (!(row_usable(d, use, i) && d->t_hybrid[i] > 0))
            continue;
        double r = d->r[i], target = pd_model_target_f(r, d->t_dram[i], d->t_slow[i], d->t_hybrid[i]);
        /* the clamped prediction, as pd_model_predict gives it */
        double fi = f[j++];
        if (!isfinite(fi))
            fi = 1;
        if (fi < 0)
            fi = 0;
        if (fi > 1 / r)
            fi = 1 / r;
        double t = d->t_slow[i] - (d->t_slow[i] - d->t_dram[i]) * r * fi;
        double t_lin = d->t_slow[i] - (d->t_slow[i] - d->t_dram[i]) * r;
        ape += fabs(t - d->t_hybrid[i]) / d->t_hybrid[i];
        ape_lin += fabs(t_lin - d->t_hybrid[i]) / d->t_hybrid[i];
        ss_tot += (target - mean_f) * (target - mean_f);
        ss_res += (target - fi) * (target - fi);
        ss_lin += (target - 1) * (target - 1);
    }
    out->rows = n;
    out->mape_t = 100 * ape / (double)n;
    out->mape_t_linear = 100 * ape_lin / (double)n;
    out->r2_f = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
    out->r2_f_linear = ss_tot > 0 ? 1 - ss_lin / ss_tot : (ss_lin == 0 ? 1 : 0);
    free(x);
    free(f);
    return PD_OK;
}

/* ---- held-out split by region ---------------------------------------------- */

static const pd_model_data *sort_data;
static int cmp_region(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(sort_data->region[i], sort_data->region[j]);
    return c ? c : (i > j) - (i < j);
}

int pd_model_split_regions(const pd_model_data *d, double frac, unsigned seed, unsigned char *held)
{
    if (!d || !held || !(frac >= 0) || frac >= 1)
        return PD_EINVAL;
    memset(held, 0, d->n);
    if (d->n == 0)
        return PD_OK;
    size_t *order = malloc(d->n * sizeof *order);
    size_t *rid = malloc(d->n * sizeof *rid);
    if (!order || !rid) {
        free(order);
        free(rid);
        return PD_ENOMEM;
    }
    for (size_t i = 0; i < d->n; i++)
        order[i] = i;
    sort_data = d; /* qsort has no context argument; callers are single-threaded tools */
    qsort(order, d->n, sizeof *order, cmp_region);
    size_t nreg = 0;
    for (size_t k = 0; k < d->n; k++) {
        if (k > 0 && strcmp(d->region[order[k]], d->region[order[k - 1]]) != 0)
            nreg++;
        rid[order[k]] = nreg;
    }
    nreg++;
    size_t want = (size_t)llround(frac * (double)nreg);
    if (frac > 0 && want == 0 && nreg >= 2)
        want = 1;
    if (want >= nreg && nreg >= 2)
        want = nreg - 1;
    /* Fisher-Yates over region ids; the first `want` are held out. */
    size_t *perm = order; /* reuse */
    for (size_t k = 0; k < nreg; k++)
        perm[k] = k;
    uint64_t s = seed;
    for (size_t k = nreg - 1; k > 0; k--) {
        size_t j = (size_t)(pd_splitmix64(&s) % (k + 1));
        size_t t = perm[k];
        perm[k] = perm[j];
        perm[j] = t;
    }
    unsigned char *is_held = calloc(nreg, 1);
    if (!is_held) {
        free(order);
        free(rid);
        return PD_ENOMEM;
    }
    for (size_t k = 0; k < want; k++)
        is_held[perm[k]] = 1;
    for (size_t i = 0; i < d->n; i++)
        held[i] = is_held[rid[i]];
    free(is_held);
    free(order);
    free(rid);
    return PD_OK;
}

/* ---- synthetic code regions ------------------------------------------------ */

static double unif(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(pd_splitmix64(s) >> 11) / (double)(1ULL << 53);
}

static double gauss(uint64_t *s)
{
    double u1 = unif(s, 1e-12, 1), u2 = unif(s, 0, 1);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Mechanistic two-tier model of one code region (docs/model.md):
 *   t_dram = C + S, S = C * mb / (1 - mb) the memory stall on DRAM;
 *   latency-bound part (1 - o) of S: serialised misses, slow tier lat_x
 *     times slower -> linear in r;
 *   bandwidth-bound part o of S: both tiers stream in parallel, the slower
 *     side dominates (max), plus contention between tiers when both are
 *     busy (peaks at r = 1/2, vanishes at r = 0 and 1);
 *   measured times carry 1% noise. Features are noisy views of the latent
 *   mb (memory-boundness), o (overlap/prefetchability), sat (contention)
 *   and wr (write share, not observed). */
typedef struct {
    double C, mb, o, sat, wr;
} synth_region;

static double synth_time(const synth_region *g, double r)
{
    double S = g->C * g->mb / (1 - g->mb);
    double lat_x = 2.08 + (3.77 - 2.08) * (1 - g->o); /* sequential .. random latency */
    double bw_x = 3.87 * (1 - g->wr) + 4.74 * g->wr;  /* read .. write bandwidth */
    double lat = S * (1 - g->o) * (r + (1 - r) * lat_x);
    double dram = r, slow = (1 - r) * bw_x;
    double bw = S * g->o * ((dram > slow ? dram : slow) + g->sat * 4 * r * (1 - r));
    return g->C + lat + bw;
}

int pd_model_gen_synthetic(pd_str *out, int nregions, int nplacements, unsigned seed)
{
    if (!out || nregions < 1 || nplacements < 1)
        return PD_EINVAL;
    uint64_t s = 0x5eedULL ^ ((uint64_t)seed << 32);
    pd_str_append(out, PD_MODEL_CSV_HEADER "\n");
    for (int g = 0; g < nregions; g++) {
        synth_region R = {
            .C = unif(&s, 0.5, 5), .mb = unif(&s, 0.05, 0.85), .o = unif(&s, 0, 1),
            .sat = unif(&s, 0, 0.6), .wr = unif(&s, 0, 0.5),
        };
        double feat[PD_NFEATURES] = {
            40 * R.mb * (0.5 + R.o) * exp(0.15 * gauss(&s)),             /* llc_mpki */
            (0.3 + 2.7 * (1 - R.mb)) * (0.8 + 0.4 * unif(&s, 0, 1)),    /* ipc */
            clamp01((1 - R.o) * unif(&s, 0.85, 1.15)),                   /* prf_miss */
            clamp01(R.mb * unif(&s, 0.9, 1.1)),                          /* mem_wcy */
            clamp01(0.1 + 0.8 * R.mb * unif(&s, 0.7, 1.3)),              /* l2_ld_miss */
            unif(&s, 0, 0.05) * (1 - R.mb),                              /* br_msp */
            R.o * unif(&s, 0.2, 0.9),                                    /* vec_ins */
            clamp01(0.2 + 0.7 * R.sat / 0.6 * unif(&s, 0.8, 1.2)),       /* l3_ld_miss */
        };
        double t_dram = synth_time(&R, 1) * (1 + 0.01 * gauss(&s));
        double t_slow = synth_time(&R, 0) * (1 + 0.01 * gauss(&s));
        for (int p = 0; p < nplacements; p++) {
            double r = clamp01((p + 1.0) / nplacements + unif(&s, -0.3, 0.3) / nplacements);
            if (r <= 0)
                r = 0.5 / nplacements;
            double t = synth_time(&R, r) * (1 + 0.01 * gauss(&s));
            pd_str_printf(out, "syn%04d,p%02d", g, p);
            for (int k = 0; k < PD_NFEATURES; k++)
                pd_str_printf(out, ",%.6g", feat[k]);
            pd_str_printf(out, ",%.4f,%.6g,%.6g,%.6g\n", r, t_dram, t_slow, t);
        }
    }
    return out->oom ? PD_ENOMEM : PD_OK;
}
