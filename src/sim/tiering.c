/* Memory-tiering baselines (see tiering.h for mechanisms and parameters). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/exec_model.h"
#include "sim/tiering.h"
#include "sim/workload.h" /* pd_wl_rand / pd_wl_uniform */

#define UNIT_PAGES 512 /* 2 MiB */

double *pd_sim_phase_page_accesses(const pd_sim_profile *p)
{
    size_t n = p->npages;
    if (p->nphases < 1)
        return NULL;
    double *acc = calloc((size_t)p->nphases * n, sizeof *acc);
    double *rsum = malloc((p->nregions ? p->nregions : 1) * sizeof *rsum);
    if (!acc || !rsum) {
        free(acc), free(rsum);
        return NULL;
    }
    for (int t = 0; t < p->ntasks; t++) {
        const pd_sim_task *tk = &p->tasks[t];
        memset(rsum, 0, p->nregions * sizeof *rsum);
        for (size_t g = 0; g < n; g++)
            rsum[p->page_region[g]] += (double)tk->reads[g] + (double)tk->writes[g];
        for (int ph = 0; ph < p->nphases; ph++) {
            const pd_sim_phase_task *pt = PD_SIM_PHASE(p, ph, t);
            for (size_t g = 0; g < n; g++) {
                size_t r = p->page_region[g];
                double a = (double)tk->reads[g] + (double)tk->writes[g];
                if (a > 0 && rsum[r] > 0)
                    acc[(size_t)ph * n + g] += ((double)pt->reads[r] + (double)pt->writes[r]) * a / rsum[r];
            }
        }
    }
    free(rsum);
    return acc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Accesses per page and phase at which an accessed bit is about as likely
 * set as not: the 90th percentile of the nonzero per-phase counts, so only
 * the hottest pages saturate (the scanners' interval, tuned in their favour). */
static double bit_scale(const double *acc, size_t cells)
{
    double *nz = malloc(cells * sizeof *nz);
    size_t k = 0;
    if (!nz)
        return 1;
    for (size_t i = 0; i < cells; i++)
        if (acc[i] > 0)
            nz[k++] = acc[i];
    double s = 1;
    if (k) {
        qsort(nz, k, sizeof *nz, cmp_double);
        s = nz[(size_t)(0.9 * (double)(k - 1))];
    }
    free(nz);
    return s > 0 ? s : 1;
}

static int bit_set(double accesses, double scale, uint64_t *seed)
{
    return pd_wl_uniform(seed) < 1 - exp(-accesses / scale);
}

/* Poisson draw (Knuth for small means, normal approximation above 30). */
static double poisson(double mean, uint64_t *seed)
{
    if (mean <= 0)
        return 0;
    if (mean > 30) {
        double u1 = fmax(pd_wl_uniform(seed), 1e-300), u2 = pd_wl_uniform(seed);
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        return fmax(0, round(mean + sqrt(mean) * z));
    }
    double L = exp(-mean), prod = pd_wl_uniform(seed);
    int k = 0;
    while (prod > L)
        k++, prod *= pd_wl_uniform(seed);
    return k;
}

typedef struct {
    double key;
    size_t idx;
} keyed;

static int cmp_keyed_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? 1 : -1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void first_touch(size_t n, size_t cap_pages, double *fast)
{
    for (size_t g = 0; g < n; g++)
        fast[g] = g < cap_pages;
}

/* ---- TPP ----------------------------------------------------------------------- */

int pd_sim_tpp(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast)
{
    size_t n = p->npages;
    double *acc = pd_sim_phase_page_accesses(p);
    int *last = malloc(n * sizeof *last), *prev = malloc(n * sizeof *prev);
    keyed *lru = malloc(n * sizeof *lru);
    if (!acc || !last || !prev || !lru) {
        free(acc), free(last), free(prev), free(lru);
        return -1;
    }
    uint64_t seed = o->seed * 0x2545f4914f6cdd1dULL + 11;
    size_t headroom = cap_pages / 50, used = cap_pages < n ? cap_pages : n;
    first_touch(n, cap_pages, fast);
    for (size_t g = 0; g < n; g++)
        last[g] = prev[g] = -100;
    for (int ph = 0; ph < p->nphases; ph++) {
        for (size_t g = 0; g < n; g++) {
            /* an unmapped page faults on its first access: any access counts */
            if (!bit_set(acc[(size_t)ph * n + g], 1.0, &seed))
                continue; /* no hint fault */
            prev[g] = last[g], last[g] = ph;
            if (fast[g] > 0 || ph - prev[g] > 2)
                continue; /* promotion needs a second fault while on the active list */
            if (used + headroom >= cap_pages) { /* demote the least recently seen fast pages */
                size_t k = 0;
                for (size_t h = 0; h < n; h++)
                    if (fast[h] > 0)
                        lru[k++] = (keyed){-(double)last[h], h};
                qsort(lru, k, sizeof *lru, cmp_keyed_desc);
                for (size_t j = 0; j < k && used + headroom >= cap_pages && j < headroom + 1; j++)
                    if (last[lru[j].idx] < ph)
                        fast[lru[j].idx] = 0, used--;
            }
            if (used < cap_pages)
                fast[g] = 1, used++;
        }
    }
    free(acc), free(last), free(prev), free(lru);
    return 0;
}

/* ---- HeMem and MEMTIS: sampled counters of 2 MiB units ---------------------------- */

/* Sampled accesses per page and phase, 1 sample per `period` accesses,
 * period chosen so the run gives about 16 samples per touched page. */
static double *sampled_accesses(const pd_sim_profile *p, const double *acc, uint64_t *seed)
{
    size_t n = p->npages, cells = (size_t)p->nphases * n, touched = 0;
    double total = 0;
    for (size_t g = 0; g < n; g++) {
        double a = 0;
        for (int ph = 0; ph < p->nphases; ph++)
            a += acc[(size_t)ph * n + g];
        total += a;
        touched += a > 0;
    }
    double period = fmax(1, total / (16.0 * (double)(touched ? touched : 1)));
    double *s = malloc(cells * sizeof *s);
    for (size_t i = 0; s && i < cells; i++)
        s[i] = poisson(acc[i] / period, seed);
    return s;
}

/* Units never span objects: object o's pages in runs of UNIT_PAGES. */
static size_t unit_of(const pd_sim_profile *p, size_t g, size_t *first, size_t *len)
{
    int o = p->region_object[p->page_region[g]];
    const pd_sim_object *ob = &p->objects[o];
    size_t k = (g - ob->page_base) / UNIT_PAGES;
    *first = ob->page_base + k * UNIT_PAGES;
    *len = ob->npages - k * UNIT_PAGES < UNIT_PAGES ? ob->npages - k * UNIT_PAGES : UNIT_PAGES;
    return *first;
}

/* Places whole units, in order of key, while they fit. */
static void place_units(const pd_sim_profile *p, keyed *units, size_t nu, size_t cap_pages,
                        double *fast)
{
    size_t used = 0;
    qsort(units, nu, sizeof *units, cmp_keyed_desc);
    for (size_t k = 0; k < nu; k++) {
        size_t first, len;
        unit_of(p, units[k].idx, &first, &len);
        if (units[k].key <= 0 || used + len > cap_pages)
            continue;
        for (size_t g = first; g < first + len; g++)
            fast[g] = 1;
        used += len;
    }
}

int pd_sim_hemem(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast)
{
    size_t n = p->npages;
    uint64_t seed = o->seed * 0x9e3779b97f4a7c15ULL + 5;
    double *acc = pd_sim_phase_page_accesses(p), *smp = acc ? sampled_accesses(p, acc, &seed) : NULL;
    double *cnt = calloc(n, sizeof *cnt); /* per unit, kept at the unit's first page */
    keyed *units = malloc(n * sizeof *units);
    if (!acc || !smp || !cnt || !units) {
        free(acc), free(smp), free(cnt), free(units);
        return -1;
    }
    memset(fast, 0, n * sizeof *fast);
    for (int ph = 0; ph < p->nphases; ph++) {
        double top = 0;
        for (size_t g = 0; g < n; g++) {
            size_t first, len;
            unit_of(p, g, &first, &len);
            cnt[first] += smp[(size_t)ph * n + g];
            top = fmax(top, cnt[first]);
        }
        if (top >= 18) /* cooling */
            for (size_t g = 0; g < n; g++)
                cnt[g] /= 2;
    }
    size_t nu = 0;
    for (size_t g = 0; g < n; g++) {
        size_t first, len;
        if (unit_of(p, g, &first, &len) == g) /* hot at 8 samples (reads and writes together) */
            units[nu++] = (keyed){cnt[g] >= 8 ? cnt[g] : 0, g};
    }
    place_units(p, units, nu, cap_pages, fast);
    free(acc), free(smp), free(cnt), free(units);
    return 0;
}

int pd_sim_memtis(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast)
{
    size_t n = p->npages;
    uint64_t seed = o->seed * 0xbf58476d1ce4e5b9ULL + 7;
    double *acc = pd_sim_phase_page_accesses(p), *smp = acc ? sampled_accesses(p, acc, &seed) : NULL;
    double *page = calloc(n, sizeof *page), *unit = calloc(n, sizeof *unit), *sub = malloc(UNIT_PAGES * sizeof *sub);
    keyed *cand = malloc(n * sizeof *cand);
    if (!acc || !smp || !page || !unit || !sub || !cand) {
        free(acc), free(smp), free(page), free(unit), free(sub), free(cand);
        return -1;
    }
    for (int ph = 0; ph < p->nphases; ph++) {
        if (ph > 0 && ph % 4 == 0) /* periodic cooling */
            for (size_t g = 0; g < n; g++)
                page[g] /= 2;
        for (size_t g = 0; g < n; g++)
            page[g] += smp[(size_t)ph * n + g];
    }
    /* units, split when skewed; candidates are units (at their first page)
     * or split pages, keyed by samples per page (the histogram's bin) */
    size_t nc = 0;
    for (size_t g = 0; g < n;) {
        size_t first, len;
        unit_of(p, g, &first, &len);
        double tot = 0;
        for (size_t k = 0; k < len; k++)
            tot += sub[k] = page[first + k];
        qsort(sub, len, sizeof *sub, cmp_double);
        double top8 = 0;
        for (size_t k = len - (len + 7) / 8; k < len; k++)
            top8 += sub[k];
        if (len > 1 && tot > 0 && top8 >= 0.8 * tot) {
            for (size_t k = 0; k < len; k++)
                cand[nc++] = (keyed){floor(log2(1 + page[first + k])), first + k};
        } else {
            unit[first] = 1;
            cand[nc++] = (keyed){floor(log2(1 + tot / (double)len)), first};
        }
        g = first + len;
    }
    /* hot threshold: bins from the top while the hot set fits */
    qsort(cand, nc, sizeof *cand, cmp_keyed_desc);
    memset(fast, 0, n * sizeof *fast);
    size_t used = 0;
    for (size_t k = 0; k < nc && cand[k].key > 0; k++) {
        size_t first = cand[k].idx, len = 1;
        if (unit[first])
            unit_of(p, first, &first, &len);
        if (used + len > cap_pages)
            break; /* this bin no longer fits: it is below the threshold */
        for (size_t g = first; g < first + len; g++)
            fast[g] = 1;
        used += len;
    }
    free(acc), free(smp), free(page), free(unit), free(sub), free(cand);
    return 0;
}

/* ---- DAMON ----------------------------------------------------------------------- */

#define DAMON_MIN 10
#define DAMON_MAX 1000
#define DAMON_SAMPLES 20

int pd_sim_damon(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast)
{
    size_t n = p->npages;
    double *acc = pd_sim_phase_page_accesses(p);
    size_t *start = malloc((DAMON_MAX + 2) * sizeof *start), *nstart = malloc((DAMON_MAX + 2) * sizeof *nstart);
    double *nr = calloc(DAMON_MAX + 1, sizeof *nr), *nnr = calloc(DAMON_MAX + 1, sizeof *nnr);
    keyed *rk = malloc((DAMON_MAX + 1) * sizeof *rk);
    if (!acc || !start || !nstart || !nr || !nnr || !rk) {
        free(acc), free(start), free(nstart), free(nr), free(nnr), free(rk);
        return -1;
    }
    uint64_t seed = o->seed * 0x94d049bb133111ebULL + 13;
    /* a sample sees one interval of the aggregation: 1/DAMON_SAMPLES of the phase */
    double scale = bit_scale(acc, (size_t)p->nphases * n) / DAMON_SAMPLES;
    size_t nreg = n < DAMON_MIN ? n : DAMON_MIN;
    for (size_t r = 0; r <= nreg; r++)
        start[r] = r * n / nreg;
    for (int ph = 0; ph < p->nphases; ph++) {
        for (size_t r = 0; r < nreg; r++) {
            nr[r] = 0;
            for (int s = 0; s < DAMON_SAMPLES; s++) {
                size_t g = start[r] + (size_t)(pd_wl_rand(&seed) % (start[r + 1] - start[r]));
                nr[r] += bit_set(acc[(size_t)ph * n + g] / DAMON_SAMPLES, scale, &seed);
            }
        }
        if (ph == p->nphases - 1)
            break; /* the last aggregation's regions are what DAMOS acts on */
        double top = 0;
        for (size_t r = 0; r < nreg; r++)
            top = fmax(top, nr[r]);
        size_t m = 0, absorbed = 0; /* merge similar neighbours, keeping DAMON_MIN */
        nstart[0] = 0;
        nnr[0] = nr[0];
        for (size_t r = 1; r < nreg; r++) {
            if (fabs(nr[r] - nnr[m]) <= 0.1 * top && nreg - absorbed - 1 >= DAMON_MIN) {
                absorbed++; /* region r joins region m */
                continue;
            }
            nstart[++m] = start[r];
            nnr[m] = nr[r];
        }
        nreg = m + 1;
        nstart[nreg] = n;
        memcpy(start, nstart, (nreg + 1) * sizeof *start);
        if (nreg < DAMON_MAX / 2) { /* split each region in two at a random page */
            m = 0;
            for (size_t r = 0; r < nreg; r++) {
                nstart[m++] = start[r];
                size_t len = start[r + 1] - start[r];
                if (len >= 2 && m < DAMON_MAX)
                    nstart[m++] = start[r] + 1 + (size_t)(pd_wl_rand(&seed) % (len - 1));
            }
            nstart[m] = n;
            nreg = m;
            memcpy(start, nstart, (nreg + 1) * sizeof *start);
        }
    }
    for (size_t r = 0; r < nreg; r++)
        rk[r] = (keyed){nr[r], r};
    qsort(rk, nreg, sizeof *rk, cmp_keyed_desc);
    memset(fast, 0, n * sizeof *fast);
    size_t used = 0;
    for (size_t k = 0; k < nreg && used < cap_pages && rk[k].key > 0; k++)
        for (size_t g = start[rk[k].idx]; g < start[rk[k].idx + 1] && used < cap_pages; g++)
            fast[g] = 1, used++;
    free(acc), free(start), free(nstart), free(nr), free(nnr), free(rk);
    return 0;
}

/* ---- Colloid -------------------------------------------------------------------- */

/* Loaded latencies of the two tiers (planners' model) with fast[] placed. */
static int loaded_latency(const pd_sim_profile *p, const pd_sim_machine *m, const double *fast,
                          pd_sim_split *s, double lat[2])
{
    double u[2];
    pd_sim_split_from_pages(s, p, fast, NULL);
    if (pd_sim_phase0_stretch(m, p, s, u) != 0)
        return -1;
    for (int t = 0; t < 2; t++)
        lat[t] = u[t] * m->tier[t].lat_seq_ns;
    return 0;
}

int pd_sim_colloid(const pd_sim_profile *p, const pd_sim_machine *m, size_t cap_pages,
                   const pd_sim_baseline_opts *o, double *fast, size_t *held_back)
{
    size_t n = p->npages;
    double *acc = pd_sim_phase_page_accesses(p), *hot = calloc(n, sizeof *hot);
    keyed *rk = malloc(n * sizeof *rk);
    pd_sim_split s = {0};
    *held_back = 0;
    if (!acc || !hot || !rk || pd_sim_split_init(&s, p) != 0) {
        free(acc), free(hot), free(rk), pd_sim_split_free(&s);
        return -1;
    }
    uint64_t seed = o->seed * 0xd6e8feb86659fd93ULL + 17;
    double scale = bit_scale(acc, (size_t)p->nphases * n);
    for (int ph = 0; ph < p->nphases; ph++)
        for (size_t g = 0; g < n; g++)
            if (pd_wl_uniform(&seed) < 0.25)
                hot[g] += bit_set(acc[(size_t)ph * n + g], scale, &seed);
    for (size_t g = 0; g < n; g++)
        rk[g] = (keyed){hot[g] + 1e-3 * pd_wl_uniform(&seed), g};
    qsort(rk, n, sizeof *rk, cmp_keyed_desc);
    size_t limit = cap_pages < n ? cap_pages : n, keep = limit;
    /* the largest prefix (in 5 % steps of the capacity) at which the fast
     * tier's loaded latency does not exceed the slow tier's */
    for (int step = 20; step >= 1; step--) {
        size_t k = limit * (size_t)step / 20;
        double lat[2];
        memset(fast, 0, n * sizeof *fast);
        for (size_t j = 0; j < k; j++)
            fast[rk[j].idx] = 1;
        if (loaded_latency(p, m, fast, &s, lat) != 0) {
            free(acc), free(hot), free(rk), pd_sim_split_free(&s);
            return -1;
        }
        keep = k;
        if (lat[0] <= lat[1])
            break;
    }
    memset(fast, 0, n * sizeof *fast);
    for (size_t j = 0; j < keep; j++)
        fast[rk[j].idx] = 1;
    *held_back = limit - keep;
    free(acc), free(hot), free(rk), pd_sim_split_free(&s);
    return 0;
}
