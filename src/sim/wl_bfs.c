/* Level-synchronous BFS on an R-MAT (power-law) graph. Vertices are split
 * into contiguous blocks, one task each (owner computes, as in 1D-partitioned
 * distributed BFS); R-MAT puts the hubs at low ids, so block 0 owns far more
 * edges than the others. Per level every task scans its block of the level
 * array for the frontier, expands those vertices and claims unvisited
 * neighbours with a compare-and-swap. Several sources per run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "sim/workload.h"

#define NTASKS 8
#define NSOURCES 4

typedef struct {
    int n;
    int *rp, *adj, *level;
    int o_rp, o_adj, o_level;
} bfs;

static void bfs_teardown(void *st)
{
    bfs *g = st;
    if (g)
        free(g->rp), free(g->adj), free(g->level), free(g);
}

static void *bfs_setup(pd_wl_ctx *ctx, const char *input, char *err, size_t errlen)
{
    static const struct { int scale, ef; double a, b, c; uint64_t seed; } in[] = {
        {10, 8, 0.45, 0.22, 0.22, 5}, {16, 8, 0.45, 0.22, 0.22, 21}, {16, 12, 0.50, 0.20, 0.20, 22},
        {17, 6, 0.45, 0.20, 0.25, 23}, {15, 16, 0.55, 0.18, 0.18, 24},
        {23, 15, 0.45, 0.22, 0.22, 25}, /* large */
    };
    int ii = pd_wl_input_index(input);
    bfs *g = calloc(1, sizeof *g);
    int *src = NULL, *dst = NULL;
    if (!g || ii < 0)
        goto oom;
    uint64_t seed = in[ii].seed;
    int n = 1 << in[ii].scale;
    size_t m = (size_t)n * in[ii].ef;
    g->n = n;
    src = malloc(m * sizeof(int));
    dst = malloc(m * sizeof(int));
    g->rp = pd_wl_zalloc(((size_t)n + 1) * sizeof(int));
    g->adj = pd_wl_alloc(2 * m * sizeof(int));
    g->level = pd_wl_alloc((size_t)n * sizeof(int));
    if (!src || !dst || !g->rp || !g->adj || !g->level)
        goto oom;
    for (size_t e = 0; e < m; e++) {
        int u = 0, v = 0;
        for (int bit = 0; bit < in[ii].scale; bit++) {
            double r = pd_wl_uniform(&seed);
            int ub = r >= in[ii].a + in[ii].b, vb = (r >= in[ii].a && r < in[ii].a + in[ii].b) ||
                                                    r >= in[ii].a + in[ii].b + in[ii].c;
            u = (u << 1) | ub;
            v = (v << 1) | vb;
        }
        src[e] = u, dst[e] = v;
        g->rp[u + 1]++, g->rp[v + 1]++; /* undirected */
    }
    for (int i = 0; i < n; i++)
        g->rp[i + 1] += g->rp[i];
    int *fill = g->level; /* scratch */
    memcpy(fill, g->rp, (size_t)n * sizeof(int));
    for (size_t e = 0; e < m; e++) {
        g->adj[fill[src[e]]++] = dst[e];
        g->adj[fill[dst[e]]++] = src[e];
    }
    free(src), free(dst);
    src = dst = NULL;
    if (pd_wl_tasks(ctx, "bfs", input, NTASKS) != 0)
        goto oom;
    const pd_wl_object_spec objs[] = {
        {"rowptr", g->rp, ((size_t)n + 1) * sizeof(int), PD_PATTERN_RANDOM, sizeof(int), &g->o_rp},
        {"adj", g->adj, 2 * m * sizeof(int), PD_PATTERN_RANDOM, sizeof(int), &g->o_adj},
        {"level", g->level, (size_t)n * sizeof(int), PD_PATTERN_RANDOM, sizeof(int), &g->o_level},
    };
    if (pd_wl_objects(ctx, objs, PD_ARRAY_LEN(objs)) != 0)
        goto oom;
    return g;
oom:
    snprintf(err, errlen, "bfs: out of memory or bad input '%s'", input ? input : "");
    free(src), free(dst);
    bfs_teardown(g);
    return NULL;
}

/* Expands the frontier vertices (level == L) of block t; returns how many
 * vertices it claimed for level L + 1. */
static long expand(pd_wl_ctx *ctx, bfs *g, int t, int L)
{
    int lo = (int)((long)g->n * t / NTASKS), hi = (int)((long)g->n * (t + 1) / NTASKS);
    long claimed = 0;
    pd_wl_rd_range(ctx, t, g->o_level, (size_t)lo * sizeof(int), (size_t)(hi - lo) * sizeof(int));
    for (int u = lo; u < hi; u++) {
        if (__atomic_load_n(&g->level[u], __ATOMIC_RELAXED) != L)
            continue;
        pd_wl_rd(ctx, t, g->o_rp, (size_t)u * sizeof(int));
        pd_wl_rd_range(ctx, t, g->o_adj, (size_t)g->rp[u] * sizeof(int), (size_t)(g->rp[u + 1] - g->rp[u]) * sizeof(int));
        for (int e = g->rp[u]; e < g->rp[u + 1]; e++) {
            int v = g->adj[e];
            pd_wl_rd(ctx, t, g->o_level, (size_t)v * sizeof(int));
            int expect = -1;
            if (__atomic_load_n(&g->level[v], __ATOMIC_RELAXED) == -1 &&
                __atomic_compare_exchange_n(&g->level[v], &expect, L + 1, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                pd_wl_wr(ctx, t, g->o_level, (size_t)v * sizeof(int));
                claimed++;
            }
        }
    }
    return claimed;
}

static void bfs_run(void *st, pd_wl_ctx *ctx)
{
    bfs *g = st;
    double reached = 0;
    for (int s = 0; s < NSOURCES; s++) {
        int source = (int)(((long)s * 7919) % g->n);
        /* every task resets its own block */
#pragma omp parallel for schedule(dynamic, 1)
        for (int t = 0; t < NTASKS; t++) {
            double t0 = pd_wl_task_begin(ctx, t);
            int lo = (int)((long)g->n * t / NTASKS), hi = (int)((long)g->n * (t + 1) / NTASKS);
            for (int u = lo; u < hi; u++)
                g->level[u] = -1;
            pd_wl_wr_range(ctx, t, g->o_level, (size_t)lo * sizeof(int), (size_t)(hi - lo) * sizeof(int));
            pd_wl_task_end(ctx, t, t0);
        }
        pd_wl_sync(ctx);
        g->level[source] = 0;
        long claimed = 1;
        for (int L = 0; claimed > 0; L++) { /* one sync point per level */
            claimed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : claimed)
            for (int t = 0; t < NTASKS; t++) {
                double t0 = pd_wl_task_begin(ctx, t);
                claimed += expand(ctx, g, t, L);
                pd_wl_task_end(ctx, t, t0);
            }
            pd_wl_sync(ctx);
            reached += (double)claimed;
        }
    }
    ctx->checksum = reached;
}

/* The last source's levels form a BFS layering: the source has level 0,
 * every edge joins levels at most one apart, a reached vertex's neighbours
 * are reached, and every other reached vertex has a parent one level up. */
static int bfs_verify(void *st, char *err, size_t errlen)
{
    bfs *g = st;
    int source = (int)(((long)(NSOURCES - 1) * 7919) % g->n);
    if (g->level[source] != 0) {
        snprintf(err, errlen, "bfs verify: source %d has level %d", source, g->level[source]);
        return -1;
    }
    for (int u = 0; u < g->n; u++) {
        int lu = g->level[u], parent = u == source;
        for (int e = g->rp[u]; e < g->rp[u + 1]; e++) {
            int lv = g->level[g->adj[e]];
            if ((lu < 0) != (lv < 0) || (lu >= 0 && (lu - lv > 1 || lv - lu > 1))) {
                snprintf(err, errlen, "bfs verify: edge %d-%d joins levels %d and %d", u, g->adj[e], lu, lv);
                return -1;
            }
            parent |= lu > 0 && lv == lu - 1;
        }
        if (lu >= 0 && !parent) {
            snprintf(err, errlen, "bfs verify: vertex %d at level %d has no parent", u, lu);
            return -1;
        }
    }
    return 0;
}

const pd_workload pd_wl_bfs = {
    .name = "bfs",
    .desc = "level-synchronous BFS on an R-MAT graph, one task per contiguous vertex block",
    .setup = bfs_setup,
    .run = bfs_run,
    .teardown = bfs_teardown,
    .verify = bfs_verify,
};
