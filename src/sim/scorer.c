/* Placement scorer (see scorer.h for the model and docs/sim.md for the
 * constants and their sources). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/exec_model.h" /* pd_sim_cov */
#include "sim/scorer.h"
#include "sim/tier.h"

/* Idle DRAM 81 ns (Izraelevitz et al. 2019); bandwidths are an 8-core
 * slice of a socket, as in tier.c. */
static const pd_score_tier dram = {81, 81, 34, 26, 64, 0, 0};

/* Page-migration throughput of 4 KiB pages (the profiles' page), cited, not
 * assumed: move_pages(2) on a vanilla kernel moving 1 GB of 4 KiB folios
 * between the two sockets' DRAM of an AMD Zen 3 EPYC server ran at
 * 3.31 +- 0.18 GB/s (3.55 +- 0.19 on v7.0-rc2); 2 MiB folios at 11.02 GB/s
 * (S. Garg, "Re: [PATCH 0/7] Accelerate page migration with batch copying
 * and hardware offload", linux-mm, 2026-05-08; docs/sim.md). The copy is
 * single-threaded and the per-page kernel work dominates at 4 KiB, so the
 * rate is that figure capped by the slow tier's write bandwidth (the copy
 * of a demotion writes there): pd_score_migrate_gbs. */
#define MIGRATE_4K_GBS 3.31

double pd_score_migrate_gbs(const pd_score_tier *slow)
{
    return fmin(MIGRATE_4K_GBS, slow->bw_write_gbs);
}

int pd_score_machine_preset(const char *name, pd_score_machine *out)
{
    if (!name)
        return -1;
    pd_score_machine m = {.tier = {dram, dram}, .contention = PD_SCORE_QUEUE,
                          .kappa = 0.1, .overlap = 0.3};
    if (!strcmp(name, "optane")) {
        /* Izraelevitz et al. 2019 / Yang et al. FAST'20: 169 / 305 ns idle
         * sequential / random reads, 256 B XPLine media granularity, write
         * bandwidth peaking at a few concurrent writers (peak 4 and the fall
         * exponent assumed); bandwidth ratios of tier.c's design. */
        m.tier[1] = (pd_score_tier){169, 305, 34 / 3.87, 26 / 4.74, 256, 4, 0.5};
    } else if (!strcmp(name, "cxl")) {
        /* Pond (ASPLOS'23): +70..90 ns over local DRAM; about half of local
         * DDR bandwidth for one device (Sun et al., MICRO'23) */
        m.tier[1] = (pd_score_tier){166, 166, 17, 11.7, 64, 0, 0};
    } else if (!strcmp(name, "cxl-slow")) {
        /* the slow end of real expansion cards: 2-5x local DRAM latency
         * (arXiv 2405.14209, three CXL cards); 5x taken, a quarter of the
         * bandwidth assumed */
        m.tier[1] = (pd_score_tier){405, 405, 34 * 0.25, 26 * 0.25, 64, 0, 0};
    } else if (strcmp(name, "dram")) {
        return -1;
    }
    m.migrate_gbs = pd_score_migrate_gbs(&m.tier[1]);
    snprintf(m.name, sizeof m.name, "%s", name);
    *out = m;
    return 0;
}

static const char *const variant_names[PD_SCORE_NVARIANTS] = {
    "nominal",         "slow latency -30%", "slow latency +30%", "slow bandwidth -30%",
    "slow bandwidth +30%", "saturating contention", "queueing kappa x3", "no overlap",
    "overlap 0.6",     "migration 1 GB/s",
    "migration 11 GB/s",
};

const char *pd_score_variant_name(int k)
{
    return k >= 0 && k < PD_SCORE_NVARIANTS ? variant_names[k] : "?";
}

void pd_score_variant(const pd_score_machine *base, int k, pd_score_machine *out)
{
    *out = *base;
    pd_score_tier *s = &out->tier[PD_SIM_SLOW];
    switch (k) {
    case 1: s->lat_seq_ns *= 0.7, s->lat_rand_ns *= 0.7; break;
    case 2: s->lat_seq_ns *= 1.3, s->lat_rand_ns *= 1.3; break;
    case 3: s->bw_read_gbs *= 0.7, s->bw_write_gbs *= 0.7; break;
    case 4: s->bw_read_gbs *= 1.3, s->bw_write_gbs *= 1.3; break;
    case 5: out->contention = PD_SCORE_SATURATE; break;
    case 6: out->kappa *= 3; break;
    case 7: out->overlap = 0; break;
    case 8: out->overlap = 0.6; break;
    /* the band of migration rates: 1 GB/s (the figure assumed before, and
     * above what the emulated two-node guest reaches: make
     * bench-migrate-numa) to the cited THP rate */
    case 9: out->migrate_gbs = fmin(out->migrate_gbs, 1.0); break;
    case 10: out->migrate_gbs = fmax(out->migrate_gbs, 11.0); break;
    default: break;
    }
}

size_t pd_score_moved_pages(const double *from, const double *to, size_t npages)
{
    size_t n = 0;
    for (size_t g = 0; g < npages; g++)
        n += (from[g] > 0.5) != (to[g] > 0.5);
    return n;
}

/* ---- one task in one phase --------------------------------------------------- */

typedef struct {
    double compute;
    double lat[2];     /* seconds of exposed latency at idle latency, per tier */
    double rd[2];      /* tier-busy seconds of reads at peak bandwidth */
    double wr_bytes[2];/* bytes the device writes (before write-bandwidth fall) */
} load;

/* Misses a core keeps in flight per pattern (the core's property, not the
 * tier's): prefetched streams many, random gathers the out-of-order window. */
static double mlp(pd_pattern pat)
{
    switch (pat) {
    case PD_PATTERN_STREAM: return 16.0;
    case PD_PATTERN_STENCIL: return 12.0;
    case PD_PATTERN_STRIDE: return 8.0;
    default: return 4.0;
    }
}

static int is_random(pd_pattern pat)
{
    return pat == PD_PATTERN_RANDOM || pat == PD_PATTERN_UNKNOWN;
}

/* Adds R reads and W writes of one object's pattern to tier t: latency for
 * the demand accesses (lat_lines), bandwidth for everything the device
 * moves (rd_lines, wr_lines, amplified by the media granularity when random). */
static void add_traffic(load *l, const pd_score_tier *tier, int t, pd_pattern pat,
                        double lat_lines, double rd_lines, double wr_lines)
{
    double lat = is_random(pat) ? tier->lat_rand_ns : tier->lat_seq_ns;
    double amp = is_random(pat) ? fmax(1.0, tier->media_bytes / PD_SIM_LINE) : 1.0;
    l->lat[t] += lat_lines * lat * 1e-9 / mlp(pat);
    l->rd[t] += rd_lines * amp * PD_SIM_LINE / (tier->bw_read_gbs * 1e9);
    l->wr_bytes[t] += wr_lines * amp * PD_SIM_LINE;
}

/* One access mix on a placement: share f of the lines fast, or, in memory
 * mode, hit rate f with a tag probe, a fill and a dirty write-back per miss. */
static void add_lines(load *l, const pd_score_machine *m, pd_pattern pat, double R, double W,
                      double f, int mm)
{
    const pd_score_tier *F = &m->tier[PD_SIM_FAST], *S = &m->tier[PD_SIM_SLOW];
    if (!mm) {
        add_traffic(l, F, PD_SIM_FAST, pat, f * (R + W), f * R, f * W);
        add_traffic(l, S, PD_SIM_SLOW, pat, (1 - f) * (R + W), (1 - f) * R, (1 - f) * W);
        return;
    }
    double miss = (1 - f) * (R + W);
    add_traffic(l, F, PD_SIM_FAST, pat, R + W, f * R + miss, f * W + miss);
    add_traffic(l, S, PD_SIM_SLOW, pat, miss, miss, (1 - f) * W);
}

static double wr_bw(const pd_score_tier *t, int writers)
{
    double bw = t->bw_write_gbs * 1e9;
    if (t->write_peak_writers > 0 && writers > t->write_peak_writers)
        bw *= pow(t->write_peak_writers / writers, t->write_fall);
    return bw;
}

static double mem_time(const load *l, const double s[2])
{
    return s[0] * l->lat[0] + s[1] * l->lat[1];
}

static double task_time(const pd_score_machine *m, const load *l, const double s[2])
{
    double M = mem_time(l, s), C = l->compute;
    return C + M - m->overlap * fmin(C, M);
}

typedef struct {
    const pd_score_machine *m;
    const load *l;
    const int *active;
    int n, writers[2];
} solve_ctx;

/* Utilisation of tier t when the tiers' latencies are stretched by s. */
static double utilisation(const solve_ctx *c, int t, const double s[2])
{
    double U = 0, bw_w = wr_bw(&c->m->tier[t], c->writers[t]);
    for (int k = 0; k < c->n; k++) {
        const load *l = &c->l[c->active[k]];
        double busy = l->rd[t] + l->wr_bytes[t] / bw_w;
        if (busy > 0)
            U += busy / task_time(c->m, l, s);
    }
    return U;
}

/* The stretch of tier t's latency the demand settles at: queueing
 * s = 1 + kappa U / (1 - U); saturating s = 1 until U would exceed 1. */
static double excess(const solve_ctx *c, int t, double s[2], double st)
{
    s[t] = st;
    double U = utilisation(c, t, s);
    if (c->m->contention == PD_SCORE_SATURATE)
        return st <= 1.0 ? (U > 1.0 ? -1.0 : 1.0) : 1.0 - U;
    if (U >= 1.0)
        return -1.0;
    return st - (1.0 + c->m->kappa * U / (1.0 - U));
}

static void solve(solve_ctx *c, double s[2])
{
    s[0] = s[1] = 1.0;
    for (int round = 0; round < 8; round++) {
        double moved = 0;
        for (int t = 0; t < 2; t++) {
            double old = s[t], lo = 1.0, hi = 2.0;
            if (excess(c, t, s, 1.0) >= 0) {
                s[t] = 1.0;
            } else {
                while (excess(c, t, s, hi) < 0 && hi < 1e9)
                    lo = hi, hi *= 2;
                for (int it = 0; it < 60; it++) {
                    double mid = 0.5 * (lo + hi);
                    if (excess(c, t, s, mid) < 0)
                        lo = mid;
                    else
                        hi = mid;
                }
                s[t] = hi;
            }
            moved += fabs(s[t] - old);
        }
        if (moved < 1e-9)
            break;
    }
}

/* Tasks of one phase start together at the barrier; when one finishes the
 * others go on with the bandwidth it freed. Returns the phase's length and
 * adds each task's finish time to busy[]. */
static double run_phase(const pd_score_machine *m, const load *l, int n, double *remaining,
                        int *active, double *busy)
{
    double now = 0;
    for (int i = 0; i < n; i++)
        remaining[i] = 1.0;
    for (;;) {
        solve_ctx c = {.m = m, .l = l, .active = active};
        for (int i = 0; i < n; i++) {
            if (remaining[i] <= 0)
                continue;
            if (l[i].compute + l[i].lat[0] + l[i].lat[1] <= 0) {
                remaining[i] = 0; /* nothing to do in this phase */
                continue;
            }
            active[c.n++] = i;
            for (int t = 0; t < 2; t++)
                c.writers[t] += l[i].wr_bytes[t] > 0;
        }
        if (c.n == 0)
            return now;
        double s[2], dt = INFINITY;
        solve(&c, s);
        for (int k = 0; k < c.n; k++)
            dt = fmin(dt, remaining[active[k]] * task_time(m, &l[active[k]], s));
        now += dt;
        for (int k = 0; k < c.n; k++) {
            int i = active[k];
            remaining[i] -= dt / task_time(m, &l[i], s);
            if (remaining[i] <= 1e-12) {
                remaining[i] = 0;
                busy[i] += now;
            }
        }
    }
}

/* Compute time such that the all-DRAM uncontended model reproduces the
 * measured phase time T: T = C + M - omega min(C, M); at least a tenth of
 * T (caches on the profiling machine hide part of the counted traffic). */
static double calibrate(double T, double M, double omega)
{
    double C = T - (1 - omega) * M; /* C >= M */
    if (C < M)
        C = omega < 1 ? (T - M) / (1 - omega) : 0; /* C < M */
    return fmax(C, 0.1 * T);
}

/* frac[t * nregions + r]: the share of task t's accesses to region r that
 * fast memory serves under the placement (the task's whole-run page
 * counts weigh the region's pages). */
static void region_fractions(const pd_sim_profile *p, const double *fast, double *frac)
{
    for (int t = 0; t < p->ntasks; t++)
        for (size_t r = 0; r < p->nregions; r++) {
            double w = 0, wf = 0, plain = 0;
            size_t lo = p->region_page[r], hi = p->region_page[r + 1];
            for (size_t g = lo; g < hi; g++) {
                double a = (double)p->tasks[t].reads[g] + (double)p->tasks[t].writes[g];
                double f = fast[g] < 0 ? 0 : fast[g] > 1 ? 1 : fast[g];
                w += a, wf += a * f, plain += f;
            }
            frac[(size_t)t * p->nregions + r] = w > 0 ? wf / w : plain / (double)(hi - lo);
        }
}

int pd_score(const pd_score_machine *m, const pd_sim_profile *p, const double *fast, int mm,
             size_t moved_pages, pd_score_result *out)
{
    int n = p->ntasks;
    double *frac = malloc((size_t)n * (p->nregions ? p->nregions : 1) * sizeof *frac);
    load *l = calloc((size_t)n, sizeof *l);
    double *remaining = malloc((size_t)n * sizeof *remaining);
    double *busy = calloc((size_t)n, sizeof *busy);
    int *active = malloc((size_t)n * sizeof *active);
    int rc = -1;
    if (!frac || !l || !remaining || !busy || !active || p->nphases < 1)
        goto out;
    region_fractions(p, fast, frac);
    double makespan = 0;
    for (int ph = 0; ph < p->nphases; ph++) {
        for (int t = 0; t < n; t++) {
            const pd_sim_phase_task *pt = PD_SIM_PHASE(p, ph, t);
            load dram_only = {0};
            memset(&l[t], 0, sizeof l[t]);
            for (size_t r = 0; r < p->nregions; r++) {
                double R = (double)pt->reads[r], W = (double)pt->writes[r];
                if (R + W <= 0)
                    continue;
                pd_pattern pat = p->objects[p->region_object[r]].pattern;
                add_lines(&l[t], m, pat, R, W, frac[(size_t)t * p->nregions + r], mm);
                add_traffic(&dram_only, &m->tier[PD_SIM_FAST], PD_SIM_FAST, pat, R + W, R, W);
            }
            l[t].compute = calibrate(pt->time_s, dram_only.lat[0], m->overlap);
        }
        makespan += run_phase(m, l, n, remaining, active, busy);
    }
    out->migrate_s = (double)moved_pages * (double)p->page_bytes / (m->migrate_gbs * 1e9);
    out->makespan = makespan + out->migrate_s;
    out->cov = pd_sim_cov(busy, n);
    if (out->task_time)
        memcpy(out->task_time, busy, (size_t)n * sizeof *busy);
    rc = 0;
out:
    free(frac), free(l), free(remaining), free(busy), free(active);
    return rc;
}

double pd_score_runtime_migrate_bw(const pd_score_machine *m, const pd_sim_profile *p)
{
    return m->migrate_gbs * 1e9 * pd_score_time_ratio(m, p);
}

void pd_score_tell_runtime_migrate_bw(const pd_score_machine *m, const pd_sim_profile *p)
{
    char bw[64];
    snprintf(bw, sizeof bw, "%.17g", pd_score_runtime_migrate_bw(m, p));
    setenv("PADDISER_MIGRATE_BW", bw, 1);
}

double pd_score_time_ratio(const pd_score_machine *m, const pd_sim_profile *p)
{
    double measured = 0;
    for (int ph = 0; ph < p->nphases; ph++) {
        double slowest = 0;
        for (int t = 0; t < p->ntasks; t++)
            if (PD_SIM_PHASE(p, ph, t)->time_s > slowest)
                slowest = PD_SIM_PHASE(p, ph, t)->time_s;
        measured += slowest;
    }
    double *fast = p->npages ? malloc(p->npages * sizeof *fast) : NULL;
    if (!(measured > 0) || !fast) {
        free(fast);
        return 1.0;
    }
    for (size_t g = 0; g < p->npages; g++)
        fast[g] = 1.0;
    pd_score_result res = {0};
    int rc = pd_score(m, p, fast, 0, 0, &res);
    free(fast);
    return rc == 0 && res.makespan > 0 ? res.makespan / measured : 1.0;
}
