/* Performance model (Eq. 2, see docs/model.md): f(features, r) by a
 * gradient-boosting regressor trained with xgboost (src/train/model_train.c) and
 * evaluated here natively (model_forest.c) from xgboost's saved model, so
 * the runtime never calls into xgboost: no OpenMP pool, no C++ thread-locals
 * (safe after fork and in exit handlers). A loaded model is read-only:
 * predictions on one model may run concurrently. A model without trees is
 * the f = 1 fallback. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/datadir.h"
#include "lib/model.h"
#include "lib/model_internal.h"
#include "paddiser.h"


const char *const pd_model_input_names[PD_MODEL_NINPUTS] = {
    "llc_mpki", "ipc", "prf_miss", "mem_wcy", "l2_ld_miss", "br_msp", "vec_ins", "l3_ld_miss", "r",
};

static pd_model *model_new(const char *source)
{
    pd_model *m = calloc(1, sizeof *m);
    if (m)
        snprintf(m->source, sizeof m->source, "%s", source ? source : "?");
    return m;
}

pd_model *pd_model_fallback(void)
{
    pd_model *m = model_new("fallback (f = 1)");
    if (m)
        m->fallback = 1;
    return m;
}

int pd_model_is_fallback(const pd_model *m)
{
    return !m || m->fallback;
}

const char *pd_model_source(const pd_model *m)
{
    return m ? m->source : "fallback (f = 1)";
}

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

pd_model *pd_model_from_buffer(const void *buf, size_t len, const char *source, char *err, size_t errlen)
{
    /* Both formats start with '{'; in JSON a key's '"' (or '}') follows,
     * in UBJSON a length marker. */
    const unsigned char *c = buf;
    size_t k = 0;
    while (buf && k < len && is_space(c[k]))
        k++;
    if (!buf || k >= len || c[k] != '{') {
        snprintf(err, errlen, "%s: not an xgboost model (want xgboost JSON or UBJSON)", source);
        return NULL;
    }
    size_t j = k + 1;
    while (j < len && is_space(c[j]))
        j++;
    int json = j >= len || c[j] == '"' || c[j] == '}';
    char why[256];
    json_t *doc;
    if (json) {
        json_error_t je;
        doc = json_loadb(buf, len, 0, &je);
        if (!doc)
            snprintf(why, sizeof why, "JSON: %s, line %d column %d", je.text, je.line, je.column);
    } else
        doc = pd_ubjson_decode(c + k, len - k, why, sizeof why);
    if (!doc) {
        snprintf(err, errlen, "%s: not an xgboost model (%s)", source, why);
        return NULL;
    }
    pd_model *m = model_new(source);
    if (!m || !(m->blob = malloc(len ? len : 1))) {
        json_decref(doc);
        pd_model_free(m);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(m->blob, buf, len);
    m->blob_len = len;
    int rc = pd_forest_from_json(doc, &m->forest, why, sizeof why);
    json_decref(doc);
    if (rc != 0) {
        snprintf(err, errlen, "%s: invalid xgboost model: %s", source, why);
        pd_model_free(m);
        return NULL;
    }
    return m;
}

pd_model *pd_model_load_buffer(const void *buf, size_t len, const char *source, char *err, size_t errlen)
{
    char dummy[512];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    return pd_model_from_buffer(buf, len, source ? source : "buffer", err, errlen);
}

static pd_model *load_file(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    char *data = pd_read_file(path, &len);
    if (!data) {
        snprintf(err, errlen, "%s: %s", path, pd_read_strerror(errno));
        return NULL;
    }
    pd_model *m = pd_model_from_buffer(data, len, path, err, errlen);
    free(data);
    return m;
}

pd_model *pd_model_load(const char *path, char *err, size_t errlen)
{
    char dummy[512];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (path)
        return load_file(path, err, errlen);
    const char *env = getenv("PADDISER_MODEL");
    if (env && *env) {
        pd_model *m = load_file(env, err, errlen);
        if (m)
            return m;
        fprintf(stderr, "paddiser: PADDISER_MODEL ignored: %s\n", err);
        err[0] = '\0';
    }
    pd_model *m = NULL;
    char shipped[4096];
    FILE *probe = pd_datadir_file("default_model.json", shipped, sizeof shipped) == 0 ? fopen(shipped, "r") : NULL;
    if (probe) { /* absent is normal (not installed): the embedded copy is the same model */
        fclose(probe);
        m = load_file(shipped, err, errlen);
    }
    if (!m && pd_model_default_size > 0)
        m = pd_model_from_buffer(pd_model_default_data, pd_model_default_size, "embedded", err, errlen);
    if (m)
        return m;
    fprintf(stderr, "paddiser: no performance model found, using f = 1 (linear in r)%s%s\n",
            err[0] ? ": " : "", err);
    return pd_model_fallback();
}

void pd_model_free(pd_model *m)
{
    if (!m)
        return;
    pd_forest_free(&m->forest);
    free(m->blob);
    free(m);
}

/* Raw f for n rows of inputs (row-major, PD_MODEL_NINPUTS floats). */
int pd_model_raw_predict(const pd_model *m, const float *rows, size_t n, double *f_out)
{
    if (!m || m->fallback) {
        for (size_t i = 0; i < n; i++)
            f_out[i] = 1;
        return PD_OK;
    }
    float out[256];
    for (size_t i = 0; i < n; i += PD_ARRAY_LEN(out)) {
        size_t k = n - i < PD_ARRAY_LEN(out) ? n - i : PD_ARRAY_LEN(out);
        pd_forest_predict(&m->forest, rows + i * PD_MODEL_NINPUTS, k, out);
        for (size_t j = 0; j < k; j++)
            f_out[i + j] = out[j];
    }
    return PD_OK;
}

static double clamp_share(double r)
{
    return !(r > 0) ? 0 : r > 1 ? 1 : r;
}

/* f such that T stays within [T_dram, T_slow]: r f in [0, 1]. */
static double clamp_f(double f, double r)
{
    if (!isfinite(f))
        f = 1;
    if (f < 0)
        f = 0;
    if (r > 0 && f > 1 / r)
        f = 1 / r;
    return f;
}

static void fill_row(float *row, const double feat[PD_NFEATURES], double r)
{
    for (int k = 0; k < PD_NFEATURES; k++)
        row[k] = feat ? (float)feat[k] : NAN;
    row[PD_NFEATURES] = (float)r;
}

double pd_model_f(const pd_model *m, const double feat[PD_NFEATURES], double r)
{
    r = clamp_share(r);
    float row[PD_MODEL_NINPUTS];
    fill_row(row, feat, r);
    double f = 1;
    pd_model_raw_predict(m, row, 1, &f);
    return clamp_f(f, r);
}

double pd_model_eq2(double t_dram, double t_slow, double r, double f)
{
    double lo = t_dram < t_slow ? t_dram : t_slow, hi = t_dram < t_slow ? t_slow : t_dram;
    double t = t_slow - (t_slow - t_dram) * r * f;
    return t < lo ? lo : t > hi ? hi : t;
}

double pd_model_predict(const pd_model *m, double t_dram, double t_slow, const double feat[PD_NFEATURES],
                        double r)
{
    r = clamp_share(r);
    return pd_model_eq2(t_dram, t_slow, r, pd_model_f(m, feat, r));
}

/* Shared by the two batch predictors: row i uses feat_each[i] when given,
 * else feat_one, and t_dram[i * t_stride] / t_slow[i * t_stride] (stride 0:
 * one pair for all rows). f = 1 on a model error. */
static int predict_rows(const pd_model *m, size_t n, const double *r, const double feat_one[PD_NFEATURES],
                        const double (*feat_each)[PD_NFEATURES], const double *t_dram, const double *t_slow,
                        size_t t_stride, double *f_out, double *t_out)
{
    float *rows = calloc((n ? n : 1) * PD_MODEL_NINPUTS, sizeof *rows);
    double *f = malloc((n ? n : 1) * sizeof *f);
    if (!rows || !f) {
        free(rows);
        free(f);
        return PD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        fill_row(rows + i * PD_MODEL_NINPUTS, feat_each ? feat_each[i] : feat_one, clamp_share(r[i]));
    pd_model_raw_predict(m, rows, n, f);
    for (size_t i = 0; i < n; i++) {
        double ri = clamp_share(r[i]);
        double fi = clamp_f(f[i], ri);
        if (f_out)
            f_out[i] = fi;
        if (t_out)
            t_out[i] = pd_model_eq2(t_dram[i * t_stride], t_slow[i * t_stride], ri, fi);
    }
    free(rows);
    free(f);
    return PD_OK;
}

int pd_model_predict_many(const pd_model *m, double t_dram, double t_slow, const double feat[PD_NFEATURES],
                          const double *r, size_t n, double *f_out, double *t_out)
{
    if (n > 0 && !r)
        return PD_EINVAL;
    return predict_rows(m, n, r, feat, NULL, &t_dram, &t_slow, 0, f_out, t_out);
}

int pd_model_predict_batch(const pd_model *m, size_t n, const double (*feat)[PD_NFEATURES], const double *r,
                           const double *t_dram, const double *t_slow, double *f_out, double *t_out)
{
    if (n > 0 && (!r || (t_out && (!t_dram || !t_slow))))
        return PD_EINVAL;
    return predict_rows(m, n, r, NULL, feat, t_dram, t_slow, 1, f_out, t_out);
}

int pd_time_table_build(pd_time_table *tt, const pd_model *m, int ntasks, const double *t_dram,
                        const double *t_slow, const double (*feat)[PD_NFEATURES], int npoints)
{
    if (!tt || ntasks < 0 || npoints < 2 || (ntasks > 0 && (!t_dram || !t_slow)))
        return PD_EINVAL;
    memset(tt, 0, sizeof *tt);
    size_t rows = (size_t)ntasks * (size_t)npoints;
    double(*fr)[PD_NFEATURES] = feat ? malloc((rows ? rows : 1) * sizeof *fr) : NULL;
    double *r = malloc((rows ? rows : 1) * sizeof *r), *td = malloc((rows ? rows : 1) * sizeof *td),
           *ts = malloc((rows ? rows : 1) * sizeof *ts), *t = malloc((rows ? rows : 1) * sizeof *t);
    int rc = PD_ENOMEM;
    if ((feat && !fr) || !r || !td || !ts || !t)
        goto out;
    for (int i = 0; i < ntasks; i++)
        for (int k = 0; k < npoints; k++) {
            size_t row = (size_t)i * npoints + k;
            if (fr)
                memcpy(fr[row], feat[i], sizeof fr[row]);
            r[row] = k == npoints - 1 ? 1.0 : (double)k / (npoints - 1);
            td[row] = t_dram[i];
            ts[row] = t_slow[i];
        }
    rc = pd_model_predict_batch(feat ? m : NULL, rows, (const double(*)[PD_NFEATURES])fr, r, td, ts, NULL, t);
    if (rc == PD_OK) {
        tt->ntasks = ntasks;
        tt->npoints = npoints;
        tt->t = t;
        t = NULL;
    }
out:
    free(fr);
    free(r);
    free(td);
    free(ts);
    free(t);
    return rc;
}

double pd_time_table_cb(void *ctx, int task, double r)
{
    const pd_time_table *tt = ctx;
    const double *row = tt->t + (size_t)task * tt->npoints;
    double x = clamp_share(r) * (tt->npoints - 1);
    int k = (int)x;
    if (k >= tt->npoints - 1)
        return row[tt->npoints - 1];
    double w = x - k;
    return row[k] * (1 - w) + row[k + 1] * w;
}

void pd_time_table_free(pd_time_table *tt)
{
    if (!tt)
        return;
    free(tt->t);
    memset(tt, 0, sizeof *tt);
}
