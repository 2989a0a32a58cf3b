/* What a migration costs and how long its gain lasts: the two sides of the
 * sync point's gain-versus-cost rule (migrate.c).
 *
 * Cost per page: the median of the last RT_MOVE_SAMPLES sync points' own
 * moves (wall time over pages moved, only those that moved at least
 * RT_MOVE_MIN_PAGES), so it is what this machine and backend really take;
 * before any move, a prior of one 4 KiB page at 1 GB/s (the order of
 * move_pages on today's two-tier machines; the simulator's scorer assumes
 * the same figure). PADDISER_MIGRATE_BW (bytes per second) fixes it
 * instead, for a backend whose moves cost nothing here (sim).
 *
 * Horizon: how many instances a new placement is expected to serve. The
 * number of consecutive instances the current input has run so far (an
 * input that has lasted k instances is, without other knowledge, expected
 * to last about k more), 1 for an input not run yet, at most RT_HISTORY. */
#include <math.h>
#include <stdlib.h>

#include "common/util.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

#define RT_MOVE_MIN_PAGES 64
#define RT_PRIOR_BW 1e9

static double fixed_bw(void)
{
    const char *v = getenv("PADDISER_MIGRATE_BW");
    double d;
    if (v && *v && pd_parse_double(v, &d) && d > 0)
        return d;
    return 0;
}

double rt_migrate_seconds_per_page(void)
{
    double bw = fixed_bw();
    if (bw > 0)
        return (double)RT_PAGE / bw;
    if (rt.nmove_s == 0)
        return (double)RT_PAGE / RT_PRIOR_BW;
    double v[RT_MOVE_SAMPLES];
    for (int i = 0; i < rt.nmove_s; i++)
        v[i] = rt.move_s[i];
    return pd_median(v, (size_t)rt.nmove_s);
}

void rt_migrate_cost_record(size_t pages_moved, double seconds)
{
    if (pages_moved < RT_MOVE_MIN_PAGES || !(seconds >= 0) || !isfinite(seconds))
        return;
    rt.move_s[rt.move_next] = seconds / (double)pages_moved;
    rt.move_next = (rt.move_next + 1) % RT_MOVE_SAMPLES;
    if (rt.nmove_s < RT_MOVE_SAMPLES)
        rt.nmove_s++;
}

void rt_input_run_record(void)
{
    uint64_t ran = rt_input_signature(1);
    if (rt.input_run > 0 && ran == rt.last_ran_input) {
        rt.input_run++;
    } else {
        if (rt.input_run > 0) { /* a visit ended: its length, for the horizon */
            rt.visit_len[rt.visit_next] = rt.input_run;
            rt.visit_next = (rt.visit_next + 1) % RT_VISITS_KEPT;
            if (rt.nvisits < RT_VISITS_KEPT)
                rt.nvisits++;
        }
        rt.input_run = 1;
    }
    rt.last_ran_input = ran;
}

int rt_visits_at_end(int *len)
{
    int all[RT_VISITS_KEPT + 1], n = 0;
    for (int i = 0; i < rt.nvisits; i++) /* the ring from its oldest */
        all[n++] = rt.visit_len[(rt.visit_next - rt.nvisits + i + RT_VISITS_KEPT) % RT_VISITS_KEPT];
    if (rt.input_run > 0)
        all[n++] = rt.input_run;
    int from = n > RT_VISITS_KEPT ? n - RT_VISITS_KEPT : 0;
    for (int i = from; i < n; i++)
        len[i - from] = all[i];
    return n - from;
}

/* Instances a placement made now is expected to serve: the coming
 * instance's input has run k instances in a row so far (0 for an input
 * that starts now), and an input that lasted k is expected to last about k
 * more (at least 1). Where earlier visits ended, their median length, less
 * the k this one has run, is what a typical visit has left: a new input of
 * a program whose inputs last 20 instances is judged over 20, not 1, so
 * its plan is applied at its first sync point instead of once it has shown
 * it stays (docs/runtime.md, *Gain versus cost*). Never less than k: a
 * visit longer than the others so far keeps the grown horizon. At most
 * RT_HISTORY. PADDISER_HORIZON_VISITS=off: k alone (bench comparisons). */
int rt_plan_horizon(void)
{
    int k = rt.input_run > 0 && rt_input_signature(0) == rt.last_ran_input ? rt.input_run : 0;
    int h = k > 1 ? k : 1;
    if (rt.nvisits > 0 && !rt_env_off("PADDISER_HORIZON_VISITS")) {
        double len[RT_VISITS_KEPT];
        for (int i = 0; i < rt.nvisits; i++)
            len[i] = rt.visit_len[i];
        int left = (int)floor(pd_median(len, (size_t)rt.nvisits)) - k;
        if (left > h)
            h = left;
    }
    return h < RT_HISTORY ? h : RT_HISTORY;
}

double rt_min_gain_share(void)
{
    const char *v = getenv("PADDISER_MIN_GAIN");
    double d;
    if (v && *v && pd_parse_double(v, &d) && d >= 0 && d < 1)
        return d;
    return 0.02;
}

/* Share of a predicted gain to count: a gain scales with the tasks'
 * memory-bound fractions m (the slow tier's penalty is m (L - 1)), and an m
 * learned from a handful of noisy instances is uncertain, so a refit of m
 * from noise alone reshuffles plans. The gain is counted at the lower
 * one-sided 95% bound of the least certain task's m, max(0, m - 1.645 se) / m.
 * Tasks whose m is not learned (the prior, counters, PADDISER_MEM_BOUND:
 * se NaN) or is 0 leave it whole. */
double rt_gain_trust(const double *m, const double *se, int n)
{
    double trust = 1.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(se[i]) || !(m[i] > 0))
            continue;
        double lo = m[i] - 1.645 * se[i];
        trust = fmin(trust, lo > 0 ? lo / m[i] : 0.0);
    }
    return trust;
}

double rt_tasks_gain_trust(const task_pred *p, int n)
{
    double *m = malloc((size_t)(n ? n : 1) * 2 * sizeof *m);
    if (!m)
        return NAN;
    for (int i = 0; i < n; i++) {
        m[i] = p[i].task->pred_mem_bound;
        m[n + i] = p[i].task->pred_mem_sd;
    }
    double trust = rt_gain_trust(m, m + n, n);
    free(m);
    return trust;
}
