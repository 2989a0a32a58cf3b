/* 7-point Jacobi stencil (variable coefficient) on a 3D grid decomposed into
 * z-slabs of uneven thickness, one task per slab (as after a poor domain
 * decomposition or with refinement). Each sweep a task streams its slab of
 * the input grid plus one halo plane on each side, its slab of the
 * coefficient array, and writes its slab of the output grid. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#include "common/util.h"
#include "sim/workload.h"

#define NTASKS 8

typedef struct {
    int nx, ny, nz, sweeps;
    int z0[NTASKS + 1];
    double *u, *v, *k;
    int o_u, o_v, o_k;
} stencil;

static void stencil_teardown(void *st)
{
    stencil *s = st;
    if (s)
        free(s->u), free(s->v), free(s->k), free(s);
}

static void *stencil_setup(pd_wl_ctx *ctx, const char *input, char *err, size_t errlen)
{
    static const struct { int nx, sweeps; int thick[NTASKS]; } in[] = {
        {16, 2, {2, 2, 3, 2, 4, 2, 1, 3}},
        {64, 8, {6, 10, 14, 8, 24, 12, 4, 18}},
        {64, 8, {8, 8, 12, 16, 20, 8, 8, 16}},
        {80, 6, {4, 6, 8, 10, 12, 14, 16, 18}},
        {48, 10, {20, 6, 6, 6, 30, 6, 6, 20}},
        {256, 2, {60, 100, 140, 80, 160, 80, 40, 30}}, /* large: 3 x 8 B x 256^2 x 690 = 1.01 GiB */
    };
    int ii = pd_wl_input_index(input);
    stencil *s = calloc(1, sizeof *s);
    if (!s || ii < 0)
        goto oom;
    s->nx = s->ny = in[ii].nx;
    s->sweeps = in[ii].sweeps;
    s->z0[0] = 0;
    for (int t = 0; t < NTASKS; t++)
        s->z0[t + 1] = s->z0[t] + in[ii].thick[t];
    s->nz = s->z0[NTASKS];
    size_t cells = (size_t)s->nx * s->ny * s->nz;
    s->u = pd_wl_alloc(cells * sizeof(double));
    s->v = pd_wl_alloc(cells * sizeof(double));
    s->k = pd_wl_alloc(cells * sizeof(double));
    if (!s->u || !s->v || !s->k)
        goto oom;
    uint64_t seed = 31 + (uint64_t)ii;
    for (size_t c = 0; c < cells; c++) {
        s->u[c] = pd_wl_uniform(&seed);
        s->v[c] = s->u[c];
        s->k[c] = 0.1 + 0.05 * pd_wl_uniform(&seed);
    }
    if (pd_wl_tasks(ctx, "stencil", input, NTASKS) != 0)
        goto oom;
    const pd_wl_object_spec objs[] = {
        {"grid_a", s->u, cells * sizeof(double), PD_PATTERN_STENCIL, sizeof(double), &s->o_u},
        {"grid_b", s->v, cells * sizeof(double), PD_PATTERN_STENCIL, sizeof(double), &s->o_v},
        {"coef", s->k, cells * sizeof(double), PD_PATTERN_STREAM, sizeof(double), &s->o_k},
    };
    if (pd_wl_objects(ctx, objs, PD_ARRAY_LEN(objs)) != 0)
        goto oom;
    return s;
oom:
    snprintf(err, errlen, "stencil: out of memory or bad input '%s'", input ? input : "");
    stencil_teardown(s);
    return NULL;
}

/* One 7-point Jacobi update of cell (x, y, z); boundary neighbours mirror the cell. */
static inline double jacobi_point(const stencil *s, const double *in, int x, int y, int z)
{
    int nx = s->nx, ny = s->ny, nz = s->nz;
    size_t plane = (size_t)nx * ny, c = (size_t)z * plane + (size_t)y * nx + x;
    double xm = x > 0 ? in[c - 1] : in[c], xp = x < nx - 1 ? in[c + 1] : in[c];
    double ym = y > 0 ? in[c - nx] : in[c], yp = y < ny - 1 ? in[c + nx] : in[c];
    double zm = z > 0 ? in[c - plane] : in[c], zp = z < nz - 1 ? in[c + plane] : in[c];
    return in[c] + s->k[c] * (xm + xp + ym + yp + zm + zp - 6.0 * in[c]);
}

static void sweep(pd_wl_ctx *ctx, stencil *s, int t, const double *in, double *out, int oin, int oout)
{
    int nx = s->nx, ny = s->ny, nz = s->nz;
    size_t plane = (size_t)nx * ny;
    for (int z = s->z0[t]; z < s->z0[t + 1]; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                size_t c = (size_t)z * plane + (size_t)y * nx + x;
                out[c] = jacobi_point(s, in, x, y, z);
            }
    int zlo = s->z0[t] > 0 ? s->z0[t] - 1 : 0, zhi = s->z0[t + 1] < nz ? s->z0[t + 1] + 1 : nz;
    pd_wl_rd_range(ctx, t, oin, (size_t)zlo * plane * sizeof(double), (size_t)(zhi - zlo) * plane * sizeof(double));
    size_t off = (size_t)s->z0[t] * plane * sizeof(double);
    size_t len = (size_t)(s->z0[t + 1] - s->z0[t]) * plane * sizeof(double);
    pd_wl_rd_range(ctx, t, s->o_k, off, len);
    pd_wl_wr_range(ctx, t, oout, off, len);
}

static void stencil_run(void *st, pd_wl_ctx *ctx)
{
    stencil *s = st;
    for (int it = 0; it < s->sweeps; it++) { /* a halo exchange / sync point per sweep */
        const double *in = it % 2 ? s->v : s->u;
        double *out = it % 2 ? s->u : s->v;
        int oin = it % 2 ? s->o_v : s->o_u, oout = it % 2 ? s->o_u : s->o_v;
#pragma omp parallel for schedule(dynamic, 1)
        for (int t = 0; t < NTASKS; t++) {
            double t0 = pd_wl_task_begin(ctx, t);
            sweep(ctx, s, t, in, out, oin, oout);
            pd_wl_task_end(ctx, t, t0);
        }
        pd_wl_sync(ctx);
    }
    const double *res = s->sweeps % 2 ? s->v : s->u;
    ctx->checksum = res[(size_t)s->nx * s->ny * s->nz / 2];
}

/* The last sweep's output against a serial recomputation from its input
 * (which the last sweep did not overwrite). */
static int stencil_verify(void *st, char *err, size_t errlen)
{
    stencil *s = st;
    int last = s->sweeps - 1;
    const double *in = last % 2 ? s->v : s->u, *out = last % 2 ? s->u : s->v;
    int nx = s->nx, ny = s->ny, nz = s->nz;
    size_t plane = (size_t)nx * ny;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                size_t c = (size_t)z * plane + (size_t)y * nx + x;
                double want = jacobi_point(s, in, x, y, z);
                if (fabs(out[c] - want) > 1e-12 * (1 + fabs(want))) {
                    snprintf(err, errlen, "stencil verify: cell (%d,%d,%d) = %g, want %g", x, y, z, out[c], want);
                    return -1;
                }
            }
    return 0;
}

const pd_workload pd_wl_stencil = {
    .name = "stencil",
    .desc = "7-point variable-coefficient Jacobi, z-slabs of uneven thickness, one task per slab",
    .setup = stencil_setup,
    .run = stencil_run,
    .teardown = stencil_teardown,
    .verify = stencil_verify,
};
