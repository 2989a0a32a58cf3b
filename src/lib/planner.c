/* Fast-memory planners behind pd_plan (see docs/planner.md).
 *
 * Both planners work on the same discretised problem: every task's time and
 * bytes curves are evaluated once on the share grid r_k = k * step
 * (k = 0..K, r_K = 1), then made monotone (time non-increasing by running
 * minimum, bytes non-decreasing by running maximum, bytes at r = 0 taken as
 * 0). Everything after that is integer work on the tables, so the callbacks
 * run exactly ntasks * (K + 1) times per call.
 *
 *   greedy: the paper's Algorithm 1. All tasks start at share 0; the task
 *     with the longest predicted time gets one more step while capacity
 *     allows; stop when the longest task cannot grow (share 1 reached or the
 *     next step does not fit). A max-heap keyed by time makes each step
 *     O(log n).
 *   exact: the optimal makespan on the grid is one of the table's times, so
 *     binary search over the sorted distinct times; a candidate M is feasible
 *     when every task has a grid point with time <= M and the sum of the
 *     least bytes reaching M fits the capacity. (On the grid this equals the
 *     greedy's makespan - see docs/planner.md for the argument - with fewer
 *     or equal bytes.) Then it bisects on M between that grid optimum and
 *     the next smaller, infeasible candidate, with shares between grid
 *     points found by bisection on the callbacks (about 25 calls per task
 *     per probe: give pd_plan cheap, tabulated curves). That refined plan is
 *     kept when it beats the grid optimum, or matches it with fewer bytes.
 *     Leftover capacity stays free: the least-bytes assignment is returned.
 *
 * Finally each task is trimmed back to the first grid point that has its
 * time: this only frees bytes (plateaus of a flat or clamped curve), so the
 * reported share always has its own, unclamped predicted time. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"

#define PD_PLAN_DEFAULT_STEP 0.05
#define PD_PLAN_MIN_STEP 1e-4 /* at most 10^4 grid points per task */

typedef struct {
    int n, K;          /* tasks, last grid index */
    double step;
    double *t;         /* [n * (K + 1)] monotone times */
    size_t *b;         /* [n * (K + 1)] monotone bytes */
} plan_tables;

static double grid_share(const plan_tables *pt, int k)
{
    return k >= pt->K ? 1.0 : k * pt->step;
}

static double T(const plan_tables *pt, int i, int k) { return pt->t[(size_t)i * (pt->K + 1) + k]; }
static size_t B(const plan_tables *pt, int i, int k) { return pt->b[(size_t)i * (pt->K + 1) + k]; }

static void tables_free(plan_tables *pt)
{
    free(pt->t);
    free(pt->b);
}

static int tables_build(plan_tables *pt, const pd_plan_problem *p, double step)
{
    memset(pt, 0, sizeof *pt);
    pt->n = p->ntasks;
    pt->step = step;
    /* Grid points up to 1 - the last step may be shorter; guard the float
     * division so 1/0.05 counts as 20 steps, not 21. */
    double steps = ceil(1.0 / step - 1e-9);
    pt->K = (int)steps;
    size_t cols = (size_t)pt->K + 1;
    if (pt->n > 0 && cols > SIZE_MAX / sizeof(double) / (size_t)pt->n)
        return PD_ENOMEM;
    size_t cells = cols * (size_t)pt->n;
    pt->t = malloc((cells ? cells : 1) * sizeof *pt->t);
    pt->b = malloc((cells ? cells : 1) * sizeof *pt->b);
    if (!pt->t || !pt->b) {
        tables_free(pt);
        return PD_ENOMEM;
    }
    for (int i = 0; i < pt->n; i++) {
        double *ti = pt->t + (size_t)i * cols;
        size_t *bi = pt->b + (size_t)i * cols;
        for (int k = 0; k <= pt->K; k++) {
            double r = grid_share(pt, k);
            double tv = p->time(p->ctx, i, r);
            if (!isfinite(tv) || tv < 0) {
                tables_free(pt);
                return PD_EINVAL;
            }
            size_t bv = k == 0 ? 0 : p->bytes(p->ctx, i, r);
            ti[k] = k > 0 && tv > ti[k - 1] ? ti[k - 1] : tv;
            bi[k] = k > 0 && bv < bi[k - 1] ? bi[k - 1] : bv;
        }
    }
    return PD_OK;
}

/* Least grid index of task i whose time is <= M, or K + 1 when none. Times
 * are non-increasing in k. */
static int least_index_within(const plan_tables *pt, int i, double M)
{
    const double *ti = pt->t + (size_t)i * (pt->K + 1);
    int lo = 0, hi = pt->K + 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ti[mid] <= M)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Fills idx with the least-bytes grid points reaching makespan M; returns 1
 * when they exist for every task and fit the capacity. */
static int feasible(const plan_tables *pt, double M, size_t capacity, int *idx)
{
    size_t used = 0;
    for (int i = 0; i < pt->n; i++) {
        int k = least_index_within(pt, i, M);
        if (k > pt->K)
            return 0;
        size_t bk = B(pt, i, k);
        if (bk > capacity - used)
            return 0;
        used += bk;
        if (idx)
            idx[i] = k;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Smallest grid makespan (one of the table's times) that is feasible; the
 * next smaller candidate (infeasible, or 0 when none) goes to *below. */
static int exact_on_grid(const plan_tables *pt, size_t capacity, double *M_out, double *below)
{
    size_t cells = (size_t)pt->n * (pt->K + 1);
    /* Only times >= the largest share-1 time can be makespans. */
    double lower = 0;
    for (int i = 0; i < pt->n; i++)
        if (T(pt, i, pt->K) > lower)
            lower = T(pt, i, pt->K);
    double *cand = malloc((cells ? cells : 1) * sizeof *cand);
    if (!cand)
        return PD_ENOMEM;
    size_t nc = 0;
    for (size_t c = 0; c < cells; c++)
        if (pt->t[c] >= lower)
            cand[nc++] = pt->t[c];
    qsort(cand, nc, sizeof *cand, cmp_double);
    size_t u = 0;
    for (size_t c = 0; c < nc; c++)
        if (u == 0 || cand[c] != cand[u - 1])
            cand[u++] = cand[c];
    /* bytes(0) == 0 makes the largest time always feasible. */
    size_t lo = 0, hi = u ? u - 1 : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (feasible(pt, cand[mid], capacity, NULL))
            hi = mid;
        else
            lo = mid + 1;
    }
    *M_out = u ? cand[lo] : 0;
    *below = u ? cand[lo > 0 ? lo - 1 : lo] : 0;
    free(cand);
    return PD_OK;
}

/* Between grid points the exact planner asks the callbacks themselves: the
 * least share of task i reaching makespan M lies between the last grid point
 * above M and the first one within it; bisection there (the curve is taken
 * as monotone inside one step) with the callback's time, then the bytes
 * callback, clamped into the neighbouring grid values so that bytes stay
 * monotone. *time gets the callback's time at the share returned. */
#define PD_PLAN_BISECT_SHARE 24 /* share resolution: step / 2^24 */
static double least_share_within(const plan_tables *pt, const pd_plan_problem *p, int i, double M,
                                 size_t *bytes, double *time)
{
    int j = least_index_within(pt, i, M);
    if (j == 0) {
        *bytes = 0;
        *time = T(pt, i, 0);
        return 0;
    }
    double r1 = grid_share(pt, j), lo = grid_share(pt, j - 1), hi = r1, t_hi = T(pt, i, j);
    for (int it = 0; it < PD_PLAN_BISECT_SHARE; it++) {
        double mid = lo + (hi - lo) / 2;
        double t = p->time(p->ctx, i, mid);
        if (isfinite(t) && t <= M) {
            hi = mid;
            t_hi = t;
        } else {
            lo = mid;
        }
    }
    *time = t_hi;
    if (hi >= r1) {
        *bytes = B(pt, i, j);
        return r1;
    }
    size_t b = p->bytes(p->ctx, i, hi);
    size_t bmin = B(pt, i, j - 1), bmax = B(pt, i, j);
    *bytes = b < bmin ? bmin : b > bmax ? bmax : b;
    return hi;
}

static int feasible_continuous(const plan_tables *pt, const pd_plan_problem *p, double M, double *share,
                               size_t *bytes, double *time)
{
    size_t used = 0;
    for (int i = 0; i < pt->n; i++) {
        if (least_index_within(pt, i, M) > pt->K)
            return 0;
        size_t b;
        double t;
        double r = least_share_within(pt, p, i, M, &b, &t);
        if (b > p->capacity - used)
            return 0;
        used += b;
        if (share) {
            share[i] = r;
            bytes[i] = b;
            time[i] = t;
        }
    }
    return 1;
}

/* Grid optimum first; then bisection on the makespan between the last
 * infeasible and the first feasible grid makespan with shares between grid
 * points, and the least (continuous) shares for the makespan found. That
 * refined plan goes to out only when its makespan, with the callback's own
 * times, is no worse than the grid optimum; otherwise the grid plan (idx)
 * stands. */
static int plan_exact(const plan_tables *pt, const pd_plan_problem *p, int *idx, pd_plan_result *out,
                      int *refined)
{
    double M, below;
    *refined = 0;
    int rc = exact_on_grid(pt, p->capacity, &M, &below);
    if (rc != PD_OK)
        return rc;
    if (pt->n == 0)
        return PD_OK;
    if (!feasible(pt, M, p->capacity, idx))
        return PD_EINVAL; /* unreachable with bytes(0) == 0 */
    double lo = below, hi = M;
    for (int it = 0; it < 60 && lo < hi && hi - lo > 1e-12 * hi; it++) {
        double mid = lo + (hi - lo) / 2;
        if (feasible_continuous(pt, p, mid, NULL, NULL, NULL))
            hi = mid;
        else
            lo = mid;
    }
    if (!feasible_continuous(pt, p, hi, out->share, out->bytes, out->time))
        return PD_OK;
    double makespan = 0;
    size_t used = 0;
    for (int i = 0; i < pt->n; i++) {
        used += out->bytes[i];
        if (out->time[i] > makespan)
            makespan = out->time[i];
    }
    /* Keep the refinement when it shortens the makespan by more than float
     * noise, or reaches the same makespan with fewer bytes. */
    size_t grid_used = 0;
    for (int i = 0; i < pt->n; i++)
        grid_used += B(pt, i, idx[i]);
    if (makespan <= M && (makespan < M * (1 - 1e-9) || used < grid_used)) {
        out->makespan = makespan;
        out->used = used;
        *refined = 1;
    }
    return PD_OK;
}

/* Max-heap of task ids by (time desc, task id asc) for deterministic ties. */
typedef struct {
    int *h, n;
    const plan_tables *pt;
    const int *idx;
} task_heap;

static int heap_before(const task_heap *hp, int a, int b)
{
    double ta = T(hp->pt, a, hp->idx[a]), tb = T(hp->pt, b, hp->idx[b]);
    return ta > tb || (ta == tb && a < b);
}

static void heap_sift_down(task_heap *hp, int pos)
{
    for (;;) {
        int l = 2 * pos + 1, r = l + 1, best = pos;
        if (l < hp->n && heap_before(hp, hp->h[l], hp->h[best]))
            best = l;
        if (r < hp->n && heap_before(hp, hp->h[r], hp->h[best]))
            best = r;
        if (best == pos)
            return;
        int tmp = hp->h[pos];
        hp->h[pos] = hp->h[best];
        hp->h[best] = tmp;
        pos = best;
    }
}

static int plan_greedy(const plan_tables *pt, size_t capacity, int *idx)
{
    if (pt->n == 0)
        return PD_OK;
    task_heap hp = {.h = malloc((size_t)pt->n * sizeof(int)), .n = pt->n, .pt = pt, .idx = idx};
    if (!hp.h)
        return PD_ENOMEM;
    for (int i = 0; i < pt->n; i++) {
        idx[i] = 0;
        hp.h[i] = i;
    }
    for (int pos = pt->n / 2 - 1; pos >= 0; pos--)
        heap_sift_down(&hp, pos);
    size_t left = capacity;
    for (;;) {
        int i = hp.h[0]; /* the longest task */
        int k = idx[i];
        if (k >= pt->K)
            break;
        size_t extra = B(pt, i, k + 1) - B(pt, i, k);
        if (extra > left)
            break;
        left -= extra;
        idx[i] = k + 1;
        heap_sift_down(&hp, 0); /* its time only went down */
    }
    free(hp.h);
    return PD_OK;
}

static int problem_valid(const pd_plan_problem *p, double step, const pd_plan_result *out)
{
    if (!p || !out || p->ntasks < 0)
        return 0;
    if (p->ntasks > 0 && (!p->time || !p->bytes || !out->share || !out->bytes || !out->time))
        return 0;
    if (!isfinite(step) || step < PD_PLAN_MIN_STEP || step > 1)
        return 0;
    return 1;
}

int pd_plan(pd_planner_kind which, const pd_plan_problem *problem, double step, pd_plan_result *out)
{
    if (step == 0)
        step = PD_PLAN_DEFAULT_STEP;
    if (which != PD_PLANNER_EXACT && which != PD_PLANNER_GREEDY)
        return PD_EINVAL;
    if (!problem_valid(problem, step, out))
        return PD_EINVAL;
    plan_tables pt;
    int rc = tables_build(&pt, problem, step);
    if (rc != PD_OK)
        return rc;
    int *idx = malloc((size_t)(pt.n ? pt.n : 1) * sizeof *idx);
    if (!idx) {
        tables_free(&pt);
        return PD_ENOMEM;
    }
    int refined = 0;
    rc = which == PD_PLANNER_GREEDY ? plan_greedy(&pt, problem->capacity, idx)
                                    : plan_exact(&pt, problem, idx, out, &refined);
    if (rc == PD_OK && !refined) {
        out->makespan = 0;
        out->used = 0;
        for (int i = 0; i < pt.n; i++) {
            int k = least_index_within(&pt, i, T(&pt, i, idx[i])); /* trim plateaus */
            out->share[i] = grid_share(&pt, k);
            out->bytes[i] = B(&pt, i, k);
            out->time[i] = T(&pt, i, k);
            out->used += out->bytes[i];
            if (out->time[i] > out->makespan)
                out->makespan = out->time[i];
        }
    }
    free(idx);
    tables_free(&pt);
    return rc;
}
