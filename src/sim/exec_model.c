/* Execution model (see exec_model.h for the equations). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/exec_model.h"

int pd_sim_split_init(pd_sim_split *s, const pd_sim_profile *p)
{
    s->ntasks = p->ntasks;
    s->nobjects = p->nobjects;
    s->v = calloc((size_t)p->ntasks * (size_t)p->nobjects * PD_SIM_NSLOTS, sizeof(double));
    return s->v ? 0 : -1;
}

void pd_sim_split_free(pd_sim_split *s)
{
    free(s->v);
    s->v = NULL;
}

void pd_sim_split_from_pages(pd_sim_split *s, const pd_sim_profile *p, const double *fast,
                             const double *probe)
{
    memset(s->v, 0, (size_t)s->ntasks * (size_t)s->nobjects * PD_SIM_NSLOTS * sizeof(double));
    for (int t = 0; t < p->ntasks; t++) {
        const pd_sim_task *tk = &p->tasks[t];
        for (int o = 0; o < p->nobjects; o++) {
            const pd_sim_object *ob = &p->objects[o];
            double *sl = PD_SIM_SPLIT_AT(s, t, o);
            for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++) {
                double r = (double)tk->reads[g], w = (double)tk->writes[g];
                if (r == 0 && w == 0)
                    continue;
                double f = fast[g] < 0 ? 0 : fast[g] > 1 ? 1 : fast[g];
                sl[PD_SIM_FR] += f * r;
                sl[PD_SIM_FW] += f * w;
                sl[PD_SIM_SR] += (1 - f) * r;
                sl[PD_SIM_SW] += (1 - f) * w;
                if (probe)
                    sl[PD_SIM_FR] += probe[g] * (r + w);
            }
        }
    }
}

/* Outstanding misses a core sustains: hardware prefetchers keep many lines
 * of a stream in flight; stencils interleave a few streams; strides defeat
 * part of the prefetching; independent random gathers are limited by the
 * out-of-order window. Unknown is treated as random. */
double pd_sim_pattern_mlp(pd_pattern pat)
{
    switch (pat) {
    case PD_PATTERN_STREAM: return 16.0;
    case PD_PATTERN_STENCIL: return 12.0;
    case PD_PATTERN_STRIDE: return 8.0;
    default: return 4.0;
    }
}

double pd_sim_pattern_latency(const pd_sim_tier *t, pd_pattern pat)
{
    return (pat == PD_PATTERN_RANDOM || pat == PD_PATTERN_UNKNOWN) ? t->lat_rand_ns : t->lat_seq_ns;
}

/* Uncontended memory time mem[t] and tier occupancy busy[t] of one task. */
static void task_components(const pd_sim_machine *m, const pd_sim_profile *p, const double *split,
                            double mem[PD_SIM_NTIERS], double busy[PD_SIM_NTIERS])
{
    for (int t = 0; t < PD_SIM_NTIERS; t++)
        mem[t] = busy[t] = 0;
    for (int o = 0; o < p->nobjects; o++) {
        const double *sl = split + (size_t)o * PD_SIM_NSLOTS;
        pd_pattern pat = p->objects[o].pattern;
        double mlp = pd_sim_pattern_mlp(pat);
        for (int t = 0; t < PD_SIM_NTIERS; t++) {
            double r = sl[2 * t], w = sl[2 * t + 1];
            if (r + w <= 0)
                continue;
            const pd_sim_tier *tier = &m->tier[t];
            double lat = (r + w) * pd_sim_pattern_latency(tier, pat) * 1e-9 / mlp;
            double bw = r * PD_SIM_LINE / (tier->bw_read_gbs * 1e9) +
                        w * PD_SIM_LINE / (tier->bw_write_gbs * 1e9);
            mem[t] += lat > bw ? lat : bw;
            busy[t] += bw;
        }
    }
}

typedef struct {
    double compute, mem[PD_SIM_NTIERS], busy[PD_SIM_NTIERS];
    double weight; /* how many identical tasks this one stands for */
} task_load;

static double load_time(const task_load *l, const double u[PD_SIM_NTIERS])
{
    double T = l->compute;
    for (int t = 0; t < PD_SIM_NTIERS; t++)
        T += u[t] * l->mem[t];
    return T;
}

static double utilisation(const task_load *l, int n, int tier, const double u[PD_SIM_NTIERS])
{
    double U = 0;
    for (int i = 0; i < n; i++) {
        if (l[i].busy[tier] <= 0)
            continue;
        U += l[i].weight * l[i].busy[tier] / load_time(&l[i], u);
    }
    return U;
}

/* Gauss-Seidel over tiers, bisection on each tier's stretch. */
static void solve_stretch(const task_load *l, int n, double u[PD_SIM_NTIERS])
{
    for (int t = 0; t < PD_SIM_NTIERS; t++)
        u[t] = 1.0;
    for (int round = 0; round < 8; round++) {
        double moved = 0;
        for (int t = 0; t < PD_SIM_NTIERS; t++) {
            double old = u[t];
            u[t] = 1.0;
            if (utilisation(l, n, t, u) > 1.0) {
                double lo = 1.0, hi = 2.0;
                u[t] = hi;
                while (utilisation(l, n, t, u) > 1.0 && hi < 1e9) {
                    lo = hi;
                    hi *= 2;
                    u[t] = hi;
                }
                for (int it = 0; it < 60; it++) {
                    u[t] = 0.5 * (lo + hi);
                    if (utilisation(l, n, t, u) > 1.0)
                        lo = u[t];
                    else
                        hi = u[t];
                }
                u[t] = hi;
            }
            moved += fabs(u[t] - old);
        }
        if (moved < 1e-9)
            break;
    }
}

double pd_sim_execute(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_split *s,
                      double *task_time)
{
    int n = p->ntasks;
    task_load *all = calloc((size_t)n, sizeof *all), *act = calloc((size_t)n, sizeof *act);
    double *remaining = calloc((size_t)n, sizeof *remaining);
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!all || !act || !remaining || !idx) {
        free(all), free(act), free(remaining), free(idx);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        all[i].compute = p->tasks[i].compute_s;
        all[i].weight = 1;
        task_components(m, p, PD_SIM_SPLIT_AT(s, i, 0), all[i].mem, all[i].busy);
        remaining[i] = 1.0;
        task_time[i] = 0;
    }
    double now = 0;
    for (;;) {
        int na = 0;
        for (int i = 0; i < n; i++)
            if (remaining[i] > 0) {
                if (load_time(&all[i], (double[]){1, 1}) <= 0) {
                    remaining[i] = 0; /* a task with nothing to do ends at once */
                    task_time[i] = now;
                    continue;
                }
                idx[na] = i;
                act[na++] = all[i];
            }
        if (na == 0)
            break;
        double u[PD_SIM_NTIERS];
        solve_stretch(act, na, u);
        double dt = INFINITY;
        for (int k = 0; k < na; k++) {
            double left = remaining[idx[k]] * load_time(&act[k], u);
            if (left < dt)
                dt = left;
        }
        now += dt;
        for (int k = 0; k < na; k++) {
            int i = idx[k];
            remaining[i] -= dt / load_time(&act[k], u);
            if (remaining[i] <= 1e-12) {
                remaining[i] = 0;
                task_time[i] = now;
            }
        }
    }
    free(all), free(act), free(remaining), free(idx);
    double mk = 0;
    for (int i = 0; i < n; i++)
        if (task_time[i] > mk)
            mk = task_time[i];
    return mk;
}

double pd_sim_task_time_shared(const pd_sim_machine *m, const pd_sim_profile *p, int task,
                               const double *split_task, int sharers)
{
    task_load l = {.compute = p->tasks[task].compute_s, .weight = sharers > 0 ? sharers : 1};
    task_components(m, p, split_task, l.mem, l.busy);
    double u[PD_SIM_NTIERS];
    solve_stretch(&l, 1, u);
    return load_time(&l, u);
}

int pd_sim_phase0_stretch(const pd_sim_machine *m, const pd_sim_profile *p, const pd_sim_split *s,
                          double u[PD_SIM_NTIERS])
{
    task_load *l = calloc((size_t)p->ntasks, sizeof *l);
    if (!l)
        return -1;
    for (int i = 0; i < p->ntasks; i++) {
        l[i].compute = p->tasks[i].compute_s;
        l[i].weight = 1;
        task_components(m, p, PD_SIM_SPLIT_AT(s, i, 0), l[i].mem, l[i].busy);
    }
    solve_stretch(l, p->ntasks, u);
    free(l);
    return 0;
}

double pd_sim_task_time_at(const pd_sim_machine *m, const pd_sim_profile *p, int task,
                           const double *split_task, const double u[PD_SIM_NTIERS])
{
    task_load l = {.compute = p->tasks[task].compute_s, .weight = 1};
    task_components(m, p, split_task, l.mem, l.busy);
    return load_time(&l, u);
}

double pd_sim_task_memtime(const pd_sim_machine *m, const pd_sim_profile *p,
                           const double *split_task)
{
    double mem[PD_SIM_NTIERS], busy[PD_SIM_NTIERS];
    task_components(m, p, split_task, mem, busy);
    return mem[0] + mem[1];
}

double pd_sim_cov(const double *x, int n)
{
    if (n < 2)
        return 0;
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++)
        mean += x[i];
    mean /= n;
    if (mean == 0)
        return 0;
    for (int i = 0; i < n; i++)
        var += (x[i] - mean) * (x[i] - mean);
    return sqrt(var / n) / mean;
}
