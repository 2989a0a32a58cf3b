/* SpGEMM C = A * B (Gustavson, dense accumulator per task). Rows have a
 * power-law number of non-zeros and mostly local columns (a band plus
 * random far entries, as in reordered meshes and graphs). Each task owns a
 * contiguous block of rows (1D partition, as ranks do) and processes them
 * binned by nnz (bin b: floor(log2(nnz)) == b), as binned SpGEMMs pick an
 * accumulator per bin. Two phases: symbolic (nnz of every C row) then
 * numeric (values), separated by a prefix sum at a sync point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "sim/workload.h"

#define NTASKS 8
#define NBINS 10

typedef struct {
    int n;
    int *rp, *ci;
    double *v;
} csr;

typedef struct {
    csr A, B;
    int *crp, *cci;
    double *cv;
    size_t cnnz;
    int *rows[NTASKS], nrows[NTASKS]; /* a task's rows, ordered by bin */
    int *marker[NTASKS];
    double *acc[NTASKS];
    int o_arp, o_aci, o_av, o_brp, o_bci, o_bv, o_crp, o_cci, o_cv;
} spgemm;

static int gen_csr(csr *m, int n, double alpha, int cap, double local, uint64_t *seed)
{
    m->n = n;
    m->rp = pd_wl_alloc(((size_t)n + 1) * sizeof(int));
    if (!m->rp)
        return -1;
    m->rp[0] = 0;
    for (int i = 0; i < n; i++) {
        /* Pareto(alpha) row length, truncated */
        double u = pd_wl_uniform(seed);
        int k = (int)floor(pow(1.0 - u, -1.0 / alpha));
        if (k < 1)
            k = 1;
        if (k > cap)
            k = cap;
        m->rp[i + 1] = m->rp[i] + k;
    }
    size_t nnz = (size_t)m->rp[n];
    m->ci = pd_wl_alloc(nnz * sizeof(int));
    m->v = pd_wl_alloc(nnz * sizeof(double));
    if (!m->ci || !m->v)
        return -1;
    for (int i = 0; i < n; i++)
        for (int e = m->rp[i]; e < m->rp[i + 1]; e++) {
            long j = (long)(pd_wl_rand(seed) % (uint64_t)n);
            if (pd_wl_uniform(seed) < local) /* band of half-width n/64 around i */
                j = ((long)i + (long)(pd_wl_rand(seed) % (uint64_t)(n / 32 + 1)) - n / 64 + n) % n;
            m->ci[e] = (int)j;
            m->v[e] = pd_wl_uniform(seed) - 0.5;
        }
    return 0;
}

static void free_csr(csr *m)
{
    free(m->rp), free(m->ci), free(m->v);
}

static void spgemm_teardown(void *st)
{
    spgemm *s = st;
    if (!s)
        return;
    free_csr(&s->A), free_csr(&s->B);
    free(s->crp), free(s->cci), free(s->cv);
    for (int b = 0; b < NTASKS; b++)
        free(s->rows[b]), free(s->marker[b]), free(s->acc[b]);
    free(s);
}

static int bin_of(int nnz)
{
    int b = 0;
    while ((1 << (b + 1)) <= nnz && b < NBINS - 1)
        b++;
    return b;
}

static void *spgemm_setup(pd_wl_ctx *ctx, const char *input, char *err, size_t errlen)
{
    static const struct { int n; double alpha; int cap; double local; uint64_t seed; } in[] = {
        {600, 0.8, 200, 0.7, 1}, {12000, 0.9, 512, 0.7, 11}, {16000, 0.95, 512, 0.7, 12},
        {9000, 0.85, 512, 0.6, 13}, {12000, 0.9, 1024, 0.8, 14},
        {1000000, 0.9, 512, 0.7, 15}, /* large */
    };
    int ii = pd_wl_input_index(input);
    spgemm *s = calloc(1, sizeof *s);
    if (!s || ii < 0)
        goto oom;
    uint64_t seed = in[ii].seed;
    if (gen_csr(&s->A, in[ii].n, in[ii].alpha, in[ii].cap, in[ii].local, &seed) != 0 ||
        gen_csr(&s->B, in[ii].n, in[ii].alpha, in[ii].cap, in[ii].local, &seed) != 0)
        goto oom;
    int n = s->A.n;
    /* per task: its row block, ordered by nnz bin (stable within a bin) */
    for (int t = 0; t < NTASKS; t++) {
        int lo = (int)((long)n * t / NTASKS), hi = (int)((long)n * (t + 1) / NTASKS);
        s->rows[t] = malloc(((size_t)(hi - lo) + 1) * sizeof(int));
        s->marker[t] = malloc((size_t)n * sizeof(int));
        s->acc[t] = calloc((size_t)n, sizeof(double));
        if (!s->rows[t] || !s->marker[t] || !s->acc[t])
            goto oom;
        for (int b = 0; b < NBINS; b++)
            for (int i = lo; i < hi; i++)
                if (bin_of(s->A.rp[i + 1] - s->A.rp[i]) == b)
                    s->rows[t][s->nrows[t]++] = i;
    }
    /* exact size of C (the run recomputes it in its symbolic phase) */
    s->crp = pd_wl_zalloc(((size_t)n + 1) * sizeof(int));
    if (!s->crp)
        goto oom;
    int *mk = s->marker[0];
    for (int j = 0; j < n; j++)
        mk[j] = -1;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int e = s->A.rp[i]; e < s->A.rp[i + 1]; e++) {
            int k = s->A.ci[e];
            for (int f = s->B.rp[k]; f < s->B.rp[k + 1]; f++)
                if (mk[s->B.ci[f]] != i)
                    mk[s->B.ci[f]] = i, c++;
        }
        s->crp[i + 1] = s->crp[i] + c;
    }
    s->cnnz = (size_t)s->crp[n];
    s->cci = pd_wl_alloc(s->cnnz * sizeof(int));
    s->cv = pd_wl_alloc(s->cnnz * sizeof(double));
    if (!s->cci || !s->cv)
        goto oom;
    size_t annz = (size_t)s->A.rp[n], bnnz = (size_t)s->B.rp[n];
    if (pd_wl_tasks(ctx, "spgemm", input, NTASKS) != 0)
        goto oom;
    const pd_wl_object_spec objs[] = {
        {"A.rowptr", s->A.rp, ((size_t)n + 1) * sizeof(int), PD_PATTERN_STREAM, sizeof(int), &s->o_arp},
        {"A.col", s->A.ci, annz * sizeof(int), PD_PATTERN_STREAM, sizeof(int), &s->o_aci},
        {"A.val", s->A.v, annz * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &s->o_av},
        {"B.rowptr", s->B.rp, ((size_t)n + 1) * sizeof(int), PD_PATTERN_RANDOM, sizeof(int), &s->o_brp},
        {"B.col", s->B.ci, bnnz * sizeof(int), PD_PATTERN_RANDOM, sizeof(int), &s->o_bci},
        {"B.val", s->B.v, bnnz * sizeof(double), PD_PATTERN_RANDOM, sizeof(double), &s->o_bv},
        {"C.rowptr", s->crp, ((size_t)n + 1) * sizeof(int), PD_PATTERN_STREAM, sizeof(int), &s->o_crp},
        {"C.col", s->cci, s->cnnz * sizeof(int), PD_PATTERN_STREAM, sizeof(int), &s->o_cci},
        {"C.val", s->cv, s->cnnz * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &s->o_cv},
    };
    if (pd_wl_objects(ctx, objs, PD_ARRAY_LEN(objs)) != 0)
        goto oom;
    return s;
oom:
    snprintf(err, errlen, "spgemm: out of memory or bad input '%s'", input ? input : "");
    spgemm_teardown(s);
    return NULL;
}

/* Reads of row i of A and, per entry, row k of B (as counted lines). */
static void count_rows(pd_wl_ctx *ctx, spgemm *s, int t, int i)
{
    const csr *A = &s->A, *B = &s->B;
    pd_wl_rd(ctx, t, s->o_arp, (size_t)i * sizeof(int));
    pd_wl_rd_range(ctx, t, s->o_aci, (size_t)A->rp[i] * sizeof(int), (size_t)(A->rp[i + 1] - A->rp[i]) * sizeof(int));
    for (int e = A->rp[i]; e < A->rp[i + 1]; e++) {
        int k = A->ci[e];
        pd_wl_rd(ctx, t, s->o_brp, (size_t)k * sizeof(int));
        pd_wl_rd_range(ctx, t, s->o_bci, (size_t)B->rp[k] * sizeof(int), (size_t)(B->rp[k + 1] - B->rp[k]) * sizeof(int));
    }
}

static void symbolic(pd_wl_ctx *ctx, spgemm *s, int t)
{
    const csr *A = &s->A, *B = &s->B;
    int *mk = s->marker[t];
    for (int j = 0; j < A->n; j++)
        mk[j] = -1;
    for (int r = 0; r < s->nrows[t]; r++) {
        int i = s->rows[t][r], c = 0;
        for (int e = A->rp[i]; e < A->rp[i + 1]; e++) {
            int k = A->ci[e];
            for (int f = B->rp[k]; f < B->rp[k + 1]; f++)
                if (mk[B->ci[f]] != i)
                    mk[B->ci[f]] = i, c++;
        }
        s->crp[i + 1] = c; /* row count; prefix-summed at the sync point */
        count_rows(ctx, s, t, i);
        pd_wl_wr(ctx, t, s->o_crp, (size_t)(i + 1) * sizeof(int));
    }
}

static void numeric(pd_wl_ctx *ctx, spgemm *s, int t)
{
    const csr *A = &s->A, *B = &s->B;
    int *mk = s->marker[t];
    double *acc = s->acc[t];
    for (int j = 0; j < A->n; j++)
        mk[j] = -1;
    for (int r = 0; r < s->nrows[t]; r++) {
        int i = s->rows[t][r];
        int pos = s->crp[i];
        for (int e = A->rp[i]; e < A->rp[i + 1]; e++) {
            int k = A->ci[e];
            double a = A->v[e];
            for (int f = B->rp[k]; f < B->rp[k + 1]; f++) {
                int j = B->ci[f];
                if (mk[j] != i) {
                    mk[j] = i;
                    s->cci[pos++] = j;
                    acc[j] = 0;
                }
                acc[j] += a * B->v[f];
            }
        }
        for (int p = s->crp[i]; p < pos; p++)
            s->cv[p] = acc[s->cci[p]];
        count_rows(ctx, s, t, i);
        pd_wl_rd_range(ctx, t, s->o_av, (size_t)A->rp[i] * sizeof(double), (size_t)(A->rp[i + 1] - A->rp[i]) * sizeof(double));
        for (int e = A->rp[i]; e < A->rp[i + 1]; e++) {
            int k = A->ci[e];
            pd_wl_rd_range(ctx, t, s->o_bv, (size_t)B->rp[k] * sizeof(double), (size_t)(B->rp[k + 1] - B->rp[k]) * sizeof(double));
        }
        pd_wl_rd(ctx, t, s->o_crp, (size_t)i * sizeof(int));
        pd_wl_wr_range(ctx, t, s->o_cci, (size_t)s->crp[i] * sizeof(int), (size_t)(pos - s->crp[i]) * sizeof(int));
        pd_wl_wr_range(ctx, t, s->o_cv, (size_t)s->crp[i] * sizeof(double), (size_t)(pos - s->crp[i]) * sizeof(double));
    }
}

static void spgemm_run(void *st, pd_wl_ctx *ctx)
{
    spgemm *s = st;
    int n = s->A.n;
    s->crp[0] = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int t = 0; t < NTASKS; t++) {
        double t0 = pd_wl_task_begin(ctx, t);
        symbolic(ctx, s, t);
        pd_wl_task_end(ctx, t, t0);
    }
    pd_wl_sync(ctx);
    for (int i = 0; i < n; i++) /* sync point: row offsets */
        s->crp[i + 1] += s->crp[i];
#pragma omp parallel for schedule(dynamic, 1)
    for (int t = 0; t < NTASKS; t++) {
        double t0 = pd_wl_task_begin(ctx, t);
        numeric(ctx, s, t);
        pd_wl_task_end(ctx, t, t0);
    }
    pd_wl_sync(ctx);
    double sum = 0;
    for (size_t p = 0; p < s->cnnz; p++)
        sum += s->cv[p];
    ctx->checksum = sum + (double)s->crp[n];
}

/* Every row of C against a dense recomputation (same summation order per
 * column, so equal up to rounding of the accumulation order). */
static int spgemm_verify(void *st, char *err, size_t errlen)
{
    spgemm *s = st;
    const csr *A = &s->A, *B = &s->B;
    double *dense = calloc((size_t)A->n, sizeof *dense);
    char *seen = calloc((size_t)A->n, 1);
    int rc = 0;
    if (!dense || !seen) {
        snprintf(err, errlen, "spgemm verify: out of memory");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < A->n; i++) {
        int nz = 0;
        for (int e = A->rp[i]; e < A->rp[i + 1]; e++)
            for (int f = B->rp[A->ci[e]]; f < B->rp[A->ci[e] + 1]; f++) {
                if (!seen[B->ci[f]])
                    seen[B->ci[f]] = 1, nz++;
                dense[B->ci[f]] += A->v[e] * B->v[f];
            }
        if (nz != s->crp[i + 1] - s->crp[i]) {
            snprintf(err, errlen, "spgemm verify: row %d has %d entries, want %d", i,
                     s->crp[i + 1] - s->crp[i], nz);
            rc = -1;
        }
        for (int p = s->crp[i]; rc == 0 && p < s->crp[i + 1]; p++) {
            int j = s->cci[p];
            if (!seen[j] || fabs(s->cv[p] - dense[j]) > 1e-9 * (1 + fabs(dense[j]))) {
                snprintf(err, errlen, "spgemm verify: C[%d][%d] = %g, want %g", i, j, s->cv[p],
                         seen[j] ? dense[j] : 0.0);
                rc = -1;
            }
        }
        for (int e = A->rp[i]; e < A->rp[i + 1]; e++)
            for (int f = B->rp[A->ci[e]]; f < B->rp[A->ci[e] + 1]; f++)
                dense[B->ci[f]] = 0, seen[B->ci[f]] = 0;
    }
    free(dense);
    free(seen);
    return rc;
}

const pd_workload pd_wl_spgemm = {
    .name = "spgemm",
    .desc = "SpGEMM C=A*B, power-law banded rows, 1D row blocks binned by nnz, symbolic + numeric phases",
    .setup = spgemm_setup,
    .run = spgemm_run,
    .teardown = spgemm_teardown,
    .verify = spgemm_verify,
};
