/* DMRG-like dense block loop: the effective-Hamiltonian application of a
 * block-sparse (quantum-number conserving) wave function, Y_b = L_q X_b R_q'
 * for every symmetry block b = (q, q'), repeated for a few Davidson-like
 * iterations (X <- Y, rescaled). Sector dimensions are bell-shaped, so the
 * blocks differ in size by orders of magnitude; blocks go round-robin to
 * the tasks (as ranks own blocks), which share the environment matrices L
 * and R. GEMMs are tiled (32x32); the counted traffic is that of the tiled
 * loop nest with one tile of each operand cache-resident. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "common/util.h"
#include "sim/workload.h"

#define NTASKS 8
#define TILE 32
#define MAXSEC 16
#define MAXBLK 64

typedef struct {
    int nsec, iters, nblk;
    int dim[MAXSEC];
    size_t env_off[MAXSEC];        /* offset (elements) of L_q / R_q in Lenv / Renv */
    int bq[MAXBLK], bq2[MAXBLK];   /* block sectors */
    size_t x_off[MAXBLK];          /* offset of X_b / Y_b / T_b */
    double *L, *R, *X, *Y, *T;
    int oL, oR, oX, oY, oT;
} dmrg;

static void dmrg_teardown(void *st)
{
    dmrg *d = st;
    if (d)
        free(d->L), free(d->R), free(d->X), free(d->Y), free(d->T), free(d);
}

static void *dmrg_setup(pd_wl_ctx *ctx, const char *input, char *err, size_t errlen)
{
    static const struct { int nsec, iters; int dim[MAXSEC]; } in[] = {
        {5, 1, {4, 12, 20, 12, 4}},
        {9, 3, {8, 24, 48, 72, 96, 72, 48, 24, 8}},
        {11, 3, {6, 16, 32, 56, 80, 96, 80, 56, 32, 16, 6}},
        {7, 3, {16, 48, 96, 128, 96, 48, 16}},
        {9, 4, {12, 20, 40, 64, 80, 64, 40, 20, 12}},
        /* large: 11 x 8 B x sum dim^2 (16.2 M) = 1.3 GiB; one iteration */
        {16, 1, {256, 384, 512, 768, 1024, 1280, 1408, 1536, 1536, 1408, 1280, 1024, 768, 512, 384, 256}},
    };
    int ii = pd_wl_input_index(input);
    dmrg *d = calloc(1, sizeof *d);
    if (!d || ii < 0)
        goto oom;
    d->nsec = in[ii].nsec;
    d->iters = in[ii].iters;
    size_t env = 0;
    for (int q = 0; q < d->nsec; q++) {
        d->dim[q] = in[ii].dim[q];
        d->env_off[q] = env;
        env += (size_t)d->dim[q] * d->dim[q];
    }
    size_t xs = 0;
    for (int q = 0; q < d->nsec; q++)
        for (int dq = -1; dq <= 1; dq++) {
            int q2 = q + dq;
            if (q2 < 0 || q2 >= d->nsec || d->nblk == MAXBLK)
                continue;
            d->bq[d->nblk] = q, d->bq2[d->nblk] = q2;
            d->x_off[d->nblk++] = xs;
            xs += (size_t)d->dim[q] * d->dim[q2];
        }
    d->L = pd_wl_alloc(env * sizeof(double));
    d->R = pd_wl_alloc(env * sizeof(double));
    d->X = pd_wl_alloc(xs * sizeof(double));
    d->Y = pd_wl_alloc(xs * sizeof(double));
    d->T = pd_wl_alloc(xs * sizeof(double));
    if (!d->L || !d->R || !d->X || !d->Y || !d->T)
        goto oom;
    uint64_t seed = 41 + (uint64_t)ii;
    for (size_t e = 0; e < env; e++)
        d->L[e] = pd_wl_uniform(&seed) - 0.5, d->R[e] = pd_wl_uniform(&seed) - 0.5;
    for (size_t e = 0; e < xs; e++)
        d->X[e] = pd_wl_uniform(&seed) - 0.5;
    if (pd_wl_tasks(ctx, "dmrg", input, NTASKS) != 0)
        goto oom;
    const pd_wl_object_spec objs[] = {
        {"Lenv", d->L, env * sizeof(double), PD_PATTERN_STRIDE, sizeof(double), &d->oL},
        {"Renv", d->R, env * sizeof(double), PD_PATTERN_STRIDE, sizeof(double), &d->oR},
        {"psi", d->X, xs * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &d->oX},
        {"Hpsi", d->Y, xs * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &d->oY},
        {"tmp", d->T, xs * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &d->oT},
    };
    if (pd_wl_objects(ctx, objs, PD_ARRAY_LEN(objs)) != 0)
        goto oom;
    return d;
oom:
    snprintf(err, errlen, "dmrg: out of memory or bad input '%s'", input ? input : "");
    dmrg_teardown(d);
    return NULL;
}

static void count_tile(pd_wl_ctx *ctx, int task, int obj, const double *base, const double *m,
                       int ld, int r0, int rows, int c0, int cols, int write)
{
    if (!ctx->counting)
        return;
    for (int r = 0; r < rows; r++) {
        size_t off = (size_t)((m - base) + (size_t)(r0 + r) * ld + c0) * sizeof(double);
        pd_wl_count_range(ctx, task, obj, off, (size_t)cols * sizeof(double), write);
    }
}

/* C[m x n] = A[m x k] * B[k x n], row-major, tiled. */
static void gemm(pd_wl_ctx *ctx, int task, int m, int n, int k, const double *A, int oA,
                 const double *Abase, const double *B, int oB, const double *Bbase, double *C,
                 int oC, const double *Cbase)
{
    for (int i0 = 0; i0 < m; i0 += TILE)
        for (int j0 = 0; j0 < n; j0 += TILE) {
            int im = i0 + TILE < m ? TILE : m - i0, jn = j0 + TILE < n ? TILE : n - j0;
            for (int i = 0; i < im; i++)
                memset(&C[(size_t)(i0 + i) * n + j0], 0, (size_t)jn * sizeof(double));
            for (int k0 = 0; k0 < k; k0 += TILE) {
                int kk = k0 + TILE < k ? TILE : k - k0;
                for (int i = 0; i < im; i++)
                    for (int p = 0; p < kk; p++) {
                        double a = A[(size_t)(i0 + i) * k + k0 + p];
                        const double *b = &B[(size_t)(k0 + p) * n + j0];
                        double *c = &C[(size_t)(i0 + i) * n + j0];
                        for (int j = 0; j < jn; j++)
                            c[j] += a * b[j];
                    }
                count_tile(ctx, task, oA, Abase, A, k, i0, im, k0, kk, 0);
                count_tile(ctx, task, oB, Bbase, B, n, k0, kk, j0, jn, 0);
            }
            count_tile(ctx, task, oC, Cbase, C, n, i0, im, j0, jn, 1);
        }
}

static void apply_block(pd_wl_ctx *ctx, dmrg *d, int task, int b)
{
    int q = d->bq[b], q2 = d->bq2[b], m = d->dim[q], n = d->dim[q2];
    const double *L = d->L + d->env_off[q], *R = d->R + d->env_off[q2];
    double *X = d->X + d->x_off[b], *Y = d->Y + d->x_off[b], *T = d->T + d->x_off[b];
    gemm(ctx, task, m, n, m, L, d->oL, d->L, X, d->oX, d->X, T, d->oT, d->T);
    gemm(ctx, task, m, n, n, T, d->oT, d->T, R, d->oR, d->R, Y, d->oY, d->Y);
    /* Davidson-like update: X <- Y / ||Y||_max */
    double mx = 1e-30;
    for (size_t e = 0; e < (size_t)m * n; e++)
        mx = Y[e] > mx ? Y[e] : -Y[e] > mx ? -Y[e] : mx;
    for (size_t e = 0; e < (size_t)m * n; e++)
        X[e] = Y[e] / mx;
    size_t off = d->x_off[b] * sizeof(double), len = (size_t)m * n * sizeof(double);
    pd_wl_rd_range(ctx, task, d->oY, off, len);
    pd_wl_rd_range(ctx, task, d->oY, off, len);
    pd_wl_wr_range(ctx, task, d->oX, off, len);
}

static void dmrg_run(void *st, pd_wl_ctx *ctx)
{
    dmrg *d = st;
    for (int it = 0; it < d->iters; it++) { /* sync point per iteration */
#pragma omp parallel for schedule(dynamic, 1)
        for (int t = 0; t < NTASKS; t++) {
            double t0 = pd_wl_task_begin(ctx, t);
            for (int b = t; b < d->nblk; b += NTASKS)
                apply_block(ctx, d, t, b);
            pd_wl_task_end(ctx, t, t0);
        }
        pd_wl_sync(ctx);
    }
    ctx->checksum = d->X[0];
}

/* Last iteration: Y_b = T_b R_q' with T_b still holding L_q X_b (naive
 * product, tolerance for the tiled summation order), and X_b = Y_b / max|Y_b|. */
static int dmrg_verify(void *st, char *err, size_t errlen)
{
    dmrg *d = st;
    for (int b = 0; b < d->nblk; b++) {
        int m = d->dim[d->bq[b]], n = d->dim[d->bq2[b]];
        const double *T = d->T + d->x_off[b], *R = d->R + d->env_off[d->bq2[b]];
        const double *Y = d->Y + d->x_off[b], *X = d->X + d->x_off[b];
        double mx = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double want = 0, scale = 0;
                for (int p = 0; p < n; p++) {
                    want += T[(size_t)i * n + p] * R[(size_t)p * n + j];
                    scale += fabs(T[(size_t)i * n + p] * R[(size_t)p * n + j]);
                }
                double y = Y[(size_t)i * n + j];
                if (fabs(y - want) > 1e-12 * (1 + scale)) {
                    snprintf(err, errlen, "dmrg verify: block %d Y[%d][%d] = %g, want %g", b, i, j, y, want);
                    return -1;
                }
                mx = fmax(mx, fabs(y));
            }
        for (size_t e = 0; e < (size_t)m * n; e++)
            if (fabs(X[e] - Y[e] / fmax(mx, 1e-30)) > 1e-12) {
                snprintf(err, errlen, "dmrg verify: block %d psi not the rescaled H psi", b);
                return -1;
            }
    }
    return 0;
}

const pd_workload pd_wl_dmrg = {
    .name = "dmrg",
    .desc = "DMRG-like block-sparse H*psi: Y_b = L_q X_b R_q' over bell-shaped sectors, blocks round-robin to tasks",
    .setup = dmrg_setup,
    .run = dmrg_run,
    .teardown = dmrg_teardown,
    .verify = dmrg_verify,
};
