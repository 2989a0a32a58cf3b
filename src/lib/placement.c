/* Sync point, planning: per process (pd_plan over this process's tasks) or
 * across processes (pd_set_allgather: every process's curves gathered, the
 * same plan computed everywhere), then this process's pages are moved. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

typedef struct {
    const double *t;   /* [RT_GRID + 1] */
    const uint64_t *b; /* [RT_GRID + 1] */
} grid_task;

static double grid_time(void *vctx, int task, double r)
{
    const grid_task *g = &((const grid_task *)vctx)[task];
    if (r <= 0)
        return g->t[0];
    if (r >= 1)
        return g->t[RT_GRID];
    double x = r * RT_GRID;
    int k = (int)x;
    return g->t[k] + (g->t[k + 1] - g->t[k]) * (x - k);
}

/* Bytes at the next grid share: a step function at or above the curve, the
 * same on every process. */
static size_t grid_bytes(void *vctx, int task, double r)
{
    const grid_task *g = &((const grid_task *)vctx)[task];
    if (r <= 0)
        return 0;
    int k = (int)ceil(r * RT_GRID - 1e-9);
    return (size_t)g->b[k > RT_GRID ? RT_GRID : k];
}

/* Capacity not yet used (none when used reaches or passes it). */
static size_t capacity_left(const pd_plan_problem *prob, size_t used)
{
    return used < prob->capacity ? prob->capacity - used : 0;
}

/* Task i's share is all its curve has (no step left). */
static int at_full_share(const pd_plan_result *res, int i) { return res->share[i] >= 1.0 - 1e-12; }

/* The grid step after task i's share, and the share of grid step k. */
static int step_after(const pd_plan_result *res, int i) { return (int)floor(res->share[i] * RT_GRID + 1e-9) + 1; }
static double step_share(int k) { return k >= RT_GRID ? 1.0 : (double)k / RT_GRID; }

/* Task i's next grid step from where the plan left it: its share and the
 * bytes it would hold there (never fewer than it holds). */
static void next_step(const pd_plan_problem *prob, const pd_plan_result *res, int i, double *r, size_t *b)
{
    *r = step_share(step_after(res, i));
    *b = prob->bytes(prob->ctx, i, *r);
    if (*b < res->bytes[i])
        *b = res->bytes[i];
}

/* Task i takes the step to share r holding b bytes. */
static void take_step(const pd_plan_problem *prob, pd_plan_result *res, int i, double r, size_t b)
{
    res->share[i] = r;
    res->bytes[i] = b;
    double t = prob->time(prob->ctx, i, r);
    if (t < res->time[i])
        res->time[i] = t;
}

/* Leftover capacity, by benefit: the planners return the least bytes that
 * reach the optimal makespan, so capacity stays free wherever a task's
 * curve is flat past its plan or tasks were trimmed to the makespan. The
 * runtime goes on with Algorithm 1 from the plan: the task with the longest
 * predicted time whose next grid step still fits gets it, until none fits.
 * The makespan never grows; the tasks just below it get the most, which is
 * where an error of the model would otherwise show first. Deterministic,
 * so every process of a plan across processes fills alike. */
void rt_fill_leftover(const pd_plan_problem *prob, pd_plan_result *res)
{
    int n = prob->ntasks;
    size_t used = 0;
    for (int i = 0; i < n; i++)
        used += res->bytes[i];
    /* Where every task's whole curve fits in what is left, every step
     * fits whenever it comes, so all end at share 1 whatever the order:
     * taken at once (a sync point of `paddiser run` whose fast memory
     * outsizes its objects went through the loop below step by step, each
     * step asking every task for its bytes again). */
    size_t whole = 0, left = capacity_left(prob, used);
    for (int i = 0; i < n && whole <= left; i++)
        if (!at_full_share(res, i)) {
            size_t b = prob->bytes(prob->ctx, i, 1.0);
            whole += b > res->bytes[i] ? b - res->bytes[i] : 0;
        }
    if (whole <= left) {
        for (int i = 0; i < n; i++) {
            if (at_full_share(res, i))
                continue;
            /* the bytes at share 1 (bytes grow with the share); the time,
             * the least of the steps' on the way, as they would be taken */
            size_t b = prob->bytes(prob->ctx, i, 1.0);
            for (int k = step_after(res, i); k <= RT_GRID; k++) {
                double t = prob->time(prob->ctx, i, step_share(k));
                if (t < res->time[i])
                    res->time[i] = t;
            }
            b = b > res->bytes[i] ? b : res->bytes[i];
            used += b - res->bytes[i];
            res->share[i] = 1.0;
            res->bytes[i] = b;
        }
    } else {
        /* Each task's next step, asked again only when it took one. */
        double *nr = malloc((size_t)(n > 0 ? n : 1) * sizeof *nr);
        size_t *nb = malloc((size_t)(n > 0 ? n : 1) * sizeof *nb);
        for (int i = 0; i < n && nr && nb; i++)
            if (!at_full_share(res, i))
                next_step(prob, res, i, &nr[i], &nb[i]);
            else
                nr[i] = -1;
        for (;;) {
            int best = -1;
            double best_share = 0;
            size_t best_bytes = 0;
            left = capacity_left(prob, used);
            for (int i = 0; i < n; i++) {
                double r;
                size_t b;
                if (nr && nb) {
                    if (nr[i] < 0)
                        continue;
                    r = nr[i], b = nb[i];
                } else { /* no memory for the cache: asked every time, same plan */
                    if (at_full_share(res, i))
                        continue;
                    next_step(prob, res, i, &r, &b);
                }
                if (b - res->bytes[i] > left)
                    continue;
                if (best < 0 || res->time[i] > res->time[best]) {
                    best = i;
                    best_share = r;
                    best_bytes = b;
                }
            }
            if (best < 0)
                break;
            used += best_bytes - res->bytes[best];
            take_step(prob, res, best, best_share, best_bytes);
            if (nr && nb) {
                if (!at_full_share(res, best))
                    next_step(prob, res, best, &nr[best], &nb[best]);
                else
                    nr[best] = -1;
            }
        }
        free(nr);
        free(nb);
    }
    double m = 0;
    for (int i = 0; i < n; i++)
        m = res->time[i] > m ? res->time[i] : m;
    if (n > 0 && m < res->makespan)
        res->makespan = m;
    res->used = used;
}

/* Gathers every process's curves and plans all tasks; fills share/bytes/
 * times for this process's n tasks (p order). PD_EUNSUPPORTED when this
 * process cannot take part (it then plans alone). */
static int plan_across(task_pred *p, int n, plan_ctx *ctx, double *share, size_t *bytes, double *times,
                       double *makespan)
{
    size_t np = (size_t)rt.nprocs;
    rt_xchg *mine = calloc(1, sizeof *mine);
    rt_xchg *all = calloc(np, sizeof *all);
    if (!mine || !all) {
        free(mine);
        free(all);
        return PD_ENOMEM;
    }
    mine->nonce = rt.nonce;
    mine->capacity = rt.capacity;
    mine->ntasks = n <= RT_XCHG_TASKS ? n : -1;
    for (int i = 0; i < n && mine->ntasks >= 0; i++) {
        mine->task[i].id = p[i].task->id;
        for (int k = 0; k <= RT_GRID; k++) {
            mine->task[i].t[k] = p[i].curve[k];
            mine->task[i].b[k] = k ? rt_bytes_cb(ctx, i, (double)k / RT_GRID) : 0;
        }
    }
    /* Even a process that cannot take part must join the collective call. */
    int rc = rt.allgather(rt.allgather_ctx, mine, all, sizeof *mine) == 0 ? PD_OK : PD_EIO;
    int self = -1, total = 0;
    uint64_t cap = UINT64_MAX;
    for (size_t q = 0; q < np && rc == PD_OK; q++) {
        if (all[q].nonce == rt.nonce && all[q].ntasks == mine->ntasks)
            self = (int)q;
        if (all[q].ntasks < 0)
            continue;
        if (all[q].ntasks > RT_XCHG_TASKS) {
            rc = PD_EINVAL;
            break;
        }
        total += all[q].ntasks;
        if (all[q].capacity < cap)
            cap = all[q].capacity;
    }
    if (rc == PD_OK && (self < 0 || mine->ntasks < 0))
        rc = PD_EUNSUPPORTED;
    grid_task *g = NULL;
    double *gs = NULL, *gt = NULL;
    size_t *gb = NULL;
    if (rc == PD_OK && total > 0) {
        g = calloc((size_t)total, sizeof *g);
        gs = calloc((size_t)total, sizeof *gs);
        gt = calloc((size_t)total, sizeof *gt);
        gb = calloc((size_t)total, sizeof *gb);
        if (!g || !gs || !gt || !gb)
            rc = PD_ENOMEM;
    }
    int first_mine = 0;
    if (rc == PD_OK && total > 0) {
        int k = 0;
        for (size_t q = 0; q < np; q++) {
            if ((int)q == self)
                first_mine = k;
            for (int i = 0; i < all[q].ntasks; i++, k++)
                g[k] = (grid_task){all[q].task[i].t, all[q].task[i].b};
        }
        rt.capacity = (size_t)cap;
        pd_plan_problem prob = {total, grid_time, grid_bytes, g, (size_t)cap};
        pd_plan_result res = {gs, gb, gt, 0, 0};
        rc = pd_plan(rt.opt.planner, &prob, 0.0, &res);
        if (rc == PD_OK)
            rt_fill_leftover(&prob, &res);
        if (rc == PD_OK) {
            for (int i = 0; i < n; i++) {
                share[i] = gs[first_mine + i];
                bytes[i] = gb[first_mine + i];
                times[i] = gt[first_mine + i];
            }
            *makespan = res.makespan;
        }
    }
    free(g);
    free(gs);
    free(gt);
    free(gb);
    free(mine);
    free(all);
    return rc;
}

int pd_set_allgather(pd_allgather_fn fn, void *ctx, int nprocs)
{
    if (fn && nprocs < 1)
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    if (!rt_ready_locked()) {
        rc = PD_ESTATE;
    } else {
        rt.allgather = fn;
        rt.allgather_ctx = fn ? ctx : NULL;
        rt.nprocs = fn ? nprocs : 0;
    }
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int rt_replan_locked(int collective)
{
    if (rt.allgather && !collective)
        return PD_OK; /* cross-process plans change only at sync points */
    rt.plan_stale = 0;
    int n = 0;
    for (int s = 0; s < rt.ntasks; s++)
        if (rt.tasks[s]->have_base)
            n++;
    if (n == 0 && !rt.allgather)
        return PD_OK;
    size_t m = n ? (size_t)n : 1;
    task_pred *p = calloc(m, sizeof *p);
    double *share = calloc(m, sizeof *share);
    size_t *bytes = calloc(m, sizeof *bytes), *kbytes = calloc(m, sizeof *kbytes);
    double *times = calloc(m, sizeof *times);
    int rc = p && share && bytes && kbytes && times ? PD_OK : PD_ENOMEM;
    uint64_t next = rt_input_signature(0); /* the input the plan is for */
    int k = 0;
    for (int s = 0; s < rt.ntasks && rc == PD_OK; s++) {
        rt_task *t = rt.tasks[s];
        if (!t->have_base)
            continue;
        if (rt_task_grow_arrays(t) != PD_OK || !(p[k].factor = calloc(t->nacc, sizeof(double)))) {
            rc = PD_ENOMEM;
            break;
        }
        p[k].task = t;
        rt_heat_select(t, next); /* a revisited input: its own heat */
        rt_predict_times(&p[k]);
        if (rt_build_bytes_curve(&p[k]) != PD_OK) {
            rc = PD_ENOMEM;
            break;
        }
        k++;
    }
    if (rc == PD_OK && n > 0)
        rc = rt_tabulate_curves(p, n);
    if (rc != PD_OK && rt.allgather) {
        /* Keep the collective call matched: take part with nothing. */
        n = 0;
        rc = PD_OK;
    }
    if (rc == PD_OK) {
        plan_ctx ctx = {p, n, n ? (double)rt_objects_total_bytes() / n : 0};
        rt.capacity = rt_plan_capacity();
        pd_plan_result res = {share, bytes, times, 0, 0};
        int prc = PD_EUNSUPPORTED;
        if (rt.allgather) {
            prc = plan_across(p, n, &ctx, share, bytes, times, &res.makespan);
            if (prc != PD_OK && prc != PD_EUNSUPPORTED)
                rt_message("planning across %d processes failed (%s): planning this process alone", rt.nprocs,
                           pd_strerror(prc));
            else if (prc == PD_EUNSUPPORTED && n > RT_XCHG_TASKS)
                rt_message("%d tasks in this process, at most %d take part in a plan across processes: planning alone",
                           n, RT_XCHG_TASKS);
        }
        if (prc != PD_OK && n > 0) {
            rt.capacity = rt_plan_capacity();
            pd_plan_problem prob = {n, rt_time_cb, rt_bytes_cb, &ctx, rt.capacity};
            prc = pd_plan(rt.opt.planner, &prob, 0.0, &res);
            if (prc != PD_OK)
                rt_message("planner failed: %s", pd_strerror(prc));
            else
                rt_fill_leftover(&prob, &res);
        } else if (n == 0) {
            prc = PD_OK;
        }
        rc = prc;
        if (rc == PD_OK && n > 0) {
            for (int i = 0; i < n; i++) {
                p[i].task->planned = 1;
                p[i].task->plan_share = share[i];
                p[i].task->plan_bytes = bytes[i];
                p[i].task->plan_time = times[i];
            }
            rt.makespan = res.makespan;
            int kept = 0;
            if (rt.backend)
                rc = rt_migrate(p, n, bytes, &kept, share, kbytes, times);
            if (rc == PD_OK && kept) {
                /* The plan did not pay for its moves, or hot-first on the
                 * same heat was predicted faster: the tasks run under the
                 * placement they have or hot-first's (across processes, the
                 * plan's makespan stays the gathered one). */
                double local = 0;
                for (int i = 0; i < n; i++) {
                    p[i].task->plan_share = share[i];
                    p[i].task->plan_bytes = kbytes[i];
                    p[i].task->plan_time = times[i];
                    local = times[i] > local ? times[i] : local;
                }
                if (!rt.allgather)
                    rt.makespan = local;
            }
        }
    }
    for (size_t i = 0; p && i < m; i++) {
        free(p[i].factor);
        pd_bytes_curve_free(&p[i].bytes);
    }
    free(p);
    free(share);
    free(bytes);
    free(kbytes);
    free(times);
    return rc;
}
