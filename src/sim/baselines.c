/* Placement baselines of related tiering systems (see baselines.h for the
 * mechanisms, parameters and sources). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/baselines.h"
#include "sim/policies.h"
#include "sim/exec_model.h"
#include "sim/workload.h" /* pd_wl_rand / pd_wl_uniform (splitmix64) */

/* ---- shared helpers --------------------------------------------------------- */

/* The timeline: the profile's phases, or its whole run as one phase. */
typedef struct {
    const pd_sim_profile *p;
    int nph;     /* phases on the timeline, >= 1 */
    double *reg; /* [ntasks][nregions][2] whole-run reads/writes per region; NULL without phases */
} timeline;

static int timeline_init(timeline *tl, const pd_sim_profile *p)
{
    tl->p = p;
    tl->reg = NULL;
    tl->nph = p->nphases > 0 ? p->nphases : 1;
    if (p->nphases <= 0)
        return 0;
    size_t nr = p->nregions;
    tl->reg = calloc((size_t)p->ntasks * nr * 2 + 1, sizeof *tl->reg);
    if (!tl->reg)
        return -1;
    for (int t = 0; t < p->ntasks; t++)
        for (size_t g = 0; g < p->npages; g++) {
            double *r = &tl->reg[((size_t)t * nr + p->page_region[g]) * 2];
            r[0] += (double)p->tasks[t].reads[g];
            r[1] += (double)p->tasks[t].writes[g];
        }
    return 0;
}

/* Page g's estimated reads rd[g] and writes wr[g] (wr NULL: both in rd) in
 * phase ph: its region's phase count times its share of the region in the
 * task's whole-run counts (per-page phase counts are not stored). A region
 * the task never touched over the run but did in the phase (inconsistent
 * input) spreads evenly. */
static void phase_accesses(const timeline *tl, int ph, double *rd, double *wr)
{
    const pd_sim_profile *p = tl->p;
    for (size_t g = 0; g < p->npages; g++) {
        double r = 0, w = 0;
        for (int t = 0; t < p->ntasks; t++) {
            const pd_sim_task *tk = &p->tasks[t];
            if (!tl->reg) { /* no phases: the whole run */
                r += (double)tk->reads[g], w += (double)tk->writes[g];
                continue;
            }
            size_t rg = p->page_region[g];
            const double *tot = &tl->reg[((size_t)t * p->nregions + rg) * 2];
            const pd_sim_phase_task *pt = PD_SIM_PHASE(p, ph, t);
            double even = 1.0 / (double)(p->region_page[rg + 1] - p->region_page[rg]);
            r += (double)pt->reads[rg] * (tot[0] > 0 ? (double)tk->reads[g] / tot[0] : even);
            w += (double)pt->writes[rg] * (tot[1] > 0 ? (double)tk->writes[g] / tot[1] : even);
        }
        if (wr)
            rd[g] = r, wr[g] = w;
        else
            rd[g] = r + w;
    }
}

/* k-th smallest of a[0..n) (quickselect; reorders a). */
static double kth_smallest(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double piv = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i <= j) {
                double x = a[i];
                a[i++] = a[j], a[j] = x;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j && j < hi)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

/* The accessed-bit / hint-fault reference: the 90th-percentile touched
 * page of the phase shows its bit with probability 1 - 1/e (the interval
 * tuned in the baseline's favour, as hot-first). */
static double ref_accesses(const double *acc, size_t n, double *scratch)
{
    size_t m = 0;
    for (size_t g = 0; g < n; g++)
        if (acc[g] > 0)
            scratch[m++] = acc[g];
    return m ? kth_smallest(scratch, m, (size_t)(0.9 * (double)(m - 1))) : 1;
}

static int bit_seen(double acc, double ref, uint64_t *s)
{
    return acc > 0 && pd_wl_uniform(s) < 1 - exp(-acc / ref);
}

/* Samples of a PEBS-like counter: Poisson(mean) (normal beyond 30). */
static double poisson(double mean, uint64_t *s)
{
    if (mean <= 0)
        return 0;
    if (mean > 30) {
        double u1 = pd_wl_uniform(s), u2 = pd_wl_uniform(s);
        double z = sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
        double x = floor(mean + sqrt(mean) * z + 0.5);
        return x > 0 ? x : 0;
    }
    double lim = exp(-mean), prod = pd_wl_uniform(s);
    int k = 0;
    while (prod > lim)
        k++, prod *= pd_wl_uniform(s);
    return k;
}

static uint64_t seed_of(const pd_sim_bl_opts *o, uint64_t salt)
{
    return (o ? o->seed : 0) * 0x9e3779b97f4a7c15ULL + salt;
}

static size_t first_touch(double *fast, size_t n, size_t cap)
{
    for (size_t g = 0; g < n; g++)
        fast[g] = g < cap;
    return n < cap ? n : cap;
}

/* A run of pages that moves together (a unit, a region, a page). */
typedef struct {
    size_t first, len;
    double key, tie; /* sampled hotness; random tie-break */
    int hot;
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->hot != y->hot)
        return x->hot ? -1 : 1;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    if (x->tie != y->tie)
        return x->tie > y->tie ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static size_t fast_in(const double *fast, const item *it)
{
    size_t k = 0;
    for (size_t g = it->first; g < it->first + it->len; g++)
        k += fast[g] > 0;
    return k;
}

/* Moves up to `want` pages of it to tier `to` (1 fast, 0 slow); returns how many moved. */
static size_t move_pages(double *fast, const item *it, size_t want, double to)
{
    size_t moved = 0;
    for (size_t g = it->first; g < it->first + it->len && moved < want; g++)
        if (fast[g] != to)
            fast[g] = to, moved++;
    return moved;
}

/* One migration pass: hot items, hottest first, into fast memory; room
 * comes from demoting non-hot items, coldest first, never a hot one.
 * whole: an item moves whole or not at all (a huge page); else in part (a
 * DAMOS quota). Sorts it. */
static void migrate(double *fast, size_t cap, size_t *used, item *it, size_t nit, int whole)
{
    qsort(it, nit, sizeof *it, cmp_item);
    size_t v = nit; /* victims are taken from the cold end */
    for (size_t i = 0; i < nit && it[i].hot; i++) {
        size_t need = it[i].len - fast_in(fast, &it[i]);
        while (need && *used + need > cap && v > i + 1 && !it[v - 1].hot) {
            *used -= move_pages(fast, &it[v - 1], whole ? SIZE_MAX : *used + need - cap, 0);
            if (fast_in(fast, &it[v - 1]) == 0)
                v--;
        }
        size_t room = cap - *used, take = need <= room ? need : whole ? 0 : room;
        *used += move_pages(fast, &it[i], take, 1);
    }
}

/* 2 MiB management units (512 4 KiB pages; one page of a profile whose
 * unit is 2 MiB or more) from each object's first page; an object's tail,
 * or an object under 2 MiB, is one shorter unit. Returns the units' first
 * pages [*nu + 1] or NULL. */
#define UNIT_BYTES (2UL << 20)
static size_t *make_units(const pd_sim_profile *p, size_t *nu)
{
    const size_t unit_pages = p->page_bytes < UNIT_BYTES ? UNIT_BYTES / p->page_bytes : 1;
    size_t n = 0;
    for (int o = 0; o < p->nobjects; o++)
        n += (p->objects[o].npages + unit_pages - 1) / unit_pages;
    size_t *first = malloc((n + 1) * sizeof *first);
    if (!first)
        return NULL;
    size_t k = 0;
    for (int o = 0; o < p->nobjects; o++)
        for (size_t q = 0; q < p->objects[o].npages; q += unit_pages)
            first[k++] = p->objects[o].page_base + q;
    first[n] = p->npages;
    *nu = n;
    return first;
}

/* Sampling period giving about `per_page` samples per page over the run. */
static double sample_period(const pd_sim_profile *p, double per_page)
{
    double tot = 0;
    for (int t = 0; t < p->ntasks; t++)
        tot += pd_sim_task_accesses(p, t);
    /* per 4 KiB of footprint, whatever the profile's unit */
    double pages4k = (double)(p->npages ? p->npages : 1) * (double)(p->page_bytes / PD_SIM_PAGE);
    double per = floor(tot / (per_page * pages4k));
    return per > 1 ? per : 1;
}

/* ---- tpp -------------------------------------------------------------------- */

/* kswapd woken by failed promotions: demotes `want` inactive fast pages,
 * least recently seen first (ranked by -last, ties by a random key). */
static void tpp_reclaim(double *fast, const unsigned char *active, const double *last, size_t n,
                        size_t want, size_t *used, pd_sim_ranked *lru, uint64_t *seed)
{
    size_t m = 0;
    for (size_t g = 0; g < n; g++)
        if (fast[g] > 0 && !active[g])
            lru[m++] = (pd_sim_ranked){-last[g], -pd_wl_uniform(seed), g};
    qsort(lru, m, sizeof *lru, pd_sim_cmp_ranked_desc);
    for (size_t k = 0; k < m && k < want; k++)
        fast[lru[k].page] = 0, (*used)--;
}

/* Promotes the candidates (in fault order) while fast memory has room;
 * returns how many are left. */
static size_t tpp_promote(double *fast, size_t cap, size_t *used, size_t *cand, size_t ncand)
{
    size_t k = 0;
    for (; k < ncand && *used < cap; k++)
        fast[cand[k]] = 1, (*used)++;
    memmove(cand, cand + k, (ncand - k) * sizeof *cand);
    return ncand - k;
}

/* Linux TPP (Maruf et al., ASPLOS'23) over NUMA-balancing hint faults.
 * Scan window n/2 pages per phase, cyclic (assumed); fault probability
 * 1 - exp(-acc / p90) (hint-fault latency threshold, assumed); promotion
 * only of active-LRU pages: first fault activates, next promotes (TPP);
 * fast-tier LRU aged by the accessed bit every phase (assumed); failed
 * promotions wake reclaim of failed + 2 % headroom pages (demotion
 * watermark, assumed) from the inactive LRU, least recently seen first,
 * then the promotions are retried. */
int pd_sim_bl_tpp(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast)
{
    size_t n = p->npages, win = (n + 1) / 2, cursor = 0, headroom = (cap_pages + 49) / 50;
    timeline tl = {0};
    double *acc = malloc(n * sizeof *acc), *scratch = malloc(n * sizeof *scratch);
    double *last = malloc(n * sizeof *last);
    unsigned char *active = calloc(n, 1);
    size_t *cand = malloc(n * sizeof *cand);
    pd_sim_ranked *lru = malloc(n * sizeof *lru);
    int rc = -1;
    if (!acc || !scratch || !last || !active || !cand || !lru || timeline_init(&tl, p) != 0)
        goto out;
    uint64_t seed = seed_of(o, 0x7470);
    size_t used = first_touch(fast, n, cap_pages);
    for (size_t g = 0; g < n; g++)
        last[g] = -1;
    for (int ph = 0; ph < tl.nph; ph++) {
        phase_accesses(&tl, ph, acc, NULL);
        double ref = ref_accesses(acc, n, scratch);
        for (size_t g = 0; g < n; g++) /* LRU aging of the fast tier */
            if (fast[g] > 0 && (active[g] = (unsigned char)bit_seen(acc[g], ref, &seed)))
                last[g] = ph;
        size_t ncand = 0;
        for (size_t k = 0; k < win; k++) { /* hint faults on slow pages in the window */
            size_t g = (cursor + k) % n;
            if (fast[g] > 0 || !bit_seen(acc[g], ref, &seed))
                continue;
            last[g] = ph;
            if (active[g])
                cand[ncand++] = g;
            active[g] = 1;
        }
        cursor = (cursor + win) % n;
        for (size_t k = ncand; k > 1; k--) { /* faults come in no particular order */
            size_t j = (size_t)(pd_wl_rand(&seed) % k), x = cand[k - 1];
            cand[k - 1] = cand[j], cand[j] = x;
        }
        size_t failed = tpp_promote(fast, cap_pages, &used, cand, ncand);
        if (failed) {
            tpp_reclaim(fast, active, last, n, failed + headroom, &used, lru, &seed);
            tpp_promote(fast, cap_pages, &used, cand, failed);
        }
    }
    rc = 0;
out:
    free(tl.reg);
    free(acc), free(scratch), free(last), free(active), free(cand), free(lru);
    return rc;
}

/* ---- hemem ------------------------------------------------------------------ */

#define HEMEM_COOL 18 /* PEBS_COOLING_THRESHOLD */
#define HEMEM_HOT_R 8 /* HOT_READ_THRESHOLD */
#define HEMEM_HOT_W 4 /* HOT_WRITE_THRESHOLD */

/* Adds a phase's samples to the per-unit read/write counters and cools:
 * all halve while one has reached the cooling threshold. */
static void hemem_sample(const size_t *first, size_t nu, const double *rd, const double *wr,
                         double period, double *cnt, uint64_t *seed)
{
    double top = 0;
    for (size_t u = 0; u < nu; u++) {
        double r = 0, w = 0;
        for (size_t g = first[u]; g < first[u + 1]; g++)
            r += rd[g], w += wr[g];
        cnt[2 * u] += poisson(r / period, seed);
        cnt[2 * u + 1] += poisson(w / period, seed);
        top = fmax(top, fmax(cnt[2 * u], cnt[2 * u + 1]));
    }
    for (; top >= HEMEM_COOL; top /= 2)
        for (size_t k = 0; k < 2 * nu; k++)
            cnt[k] = floor(cnt[k] / 2);
}

/* HeMem (Raybuck et al., SOSP'21): 2 MiB units, PEBS-like sampling (~4
 * samples per page per run, assumed), cooling at 18, hot at 8 sampled
 * reads or 4 writes (HeMem pebs.h). At every phase end (HeMem: every
 * 10 ms) hot units, hottest first, move into fast memory whole; cold ones
 * move out to make room; a hot unit never displaces a hot one. */
int pd_sim_bl_hemem(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast)
{
    size_t n = p->npages, nu = 0;
    timeline tl = {0};
    size_t *first = make_units(p, &nu);
    double *rd = malloc(n * sizeof *rd), *wr = malloc(n * sizeof *wr);
    double *cnt = first ? calloc(2 * nu + 1, sizeof *cnt) : NULL;
    item *it = first ? malloc((nu + 1) * sizeof *it) : NULL;
    int rc = -1;
    if (!first || !rd || !wr || !cnt || !it || timeline_init(&tl, p) != 0)
        goto out;
    double period = sample_period(p, 4);
    uint64_t seed = seed_of(o, 0x68656d);
    size_t used = first_touch(fast, n, cap_pages);
    for (int ph = 0; ph < tl.nph; ph++) {
        phase_accesses(&tl, ph, rd, wr);
        hemem_sample(first, nu, rd, wr, period, cnt, &seed);
        for (size_t u = 0; u < nu; u++)
            it[u] = (item){first[u], first[u + 1] - first[u], cnt[2 * u] + cnt[2 * u + 1],
                           pd_wl_uniform(&seed), cnt[2 * u] >= HEMEM_HOT_R || cnt[2 * u + 1] >= HEMEM_HOT_W};
        migrate(fast, cap_pages, &used, it, nu, 1);
    }
    rc = 0;
out:
    free(tl.reg), free(first), free(rd), free(wr), free(cnt), free(it);
    return rc;
}

/* ---- memtis ----------------------------------------------------------------- */

#define MEMTIS_BINS 16   /* htmm get_idx: log2 bins 0..15 */
#define MEMTIS_COOL_PH 20 /* htmm_cooling_period / htmm_adaptation_period */

static int log2_bin(double c)
{
    int b = 0;
    for (c += 1; c >= 2 && b < MEMTIS_BINS - 1; c /= 2)
        b++;
    return b;
}

/* Hot threshold: the lowest bin whose items, counted from the top bin
 * down, still fit the capacity; at least 1 (htmm_thres_hot); the top bin
 * when even it does not fit (then what fits of it moves). */
static int memtis_threshold(const item *it, size_t nit, size_t cap)
{
    size_t hist[MEMTIS_BINS] = {0}, sum = 0;
    for (size_t i = 0; i < nit; i++)
        hist[log2_bin(it[i].key)] += it[i].len;
    int b = MEMTIS_BINS - 1;
    for (; b >= 1 && sum + hist[b] <= cap; b--)
        sum += hist[b];
    return b == MEMTIS_BINS - 1 ? b : b + 1;
}

/* A unit whose samples concentrate on few subpages: effective subpages
 * (sum c)^2 / sum c^2 at most an eighth of its pages, on >= 64 samples. */
static int memtis_skewed(const double *cnt, size_t first, size_t len)
{
    double s = 0, q = 0;
    for (size_t g = first; g < first + len; g++)
        s += cnt[g], q += cnt[g] * cnt[g];
    return len > 1 && s >= 64 && s * s * 8 <= q * (double)len;
}

/* This phase's items: whole units, and the pages of split ones. Splits
 * newly skewed units first. Returns the item count. */
static size_t memtis_items(const size_t *first, size_t nu, const double *cnt, unsigned char *split,
                           size_t *splits, item *it, uint64_t *seed)
{
    size_t nit = 0;
    for (size_t u = 0; u < nu; u++) {
        size_t len = first[u + 1] - first[u];
        if (!split[u] && memtis_skewed(cnt, first[u], len))
            split[u] = 1, (*splits)++;
        if (split[u]) {
            for (size_t g = first[u]; g < first[u + 1]; g++)
                it[nit++] = (item){g, 1, cnt[g], pd_wl_uniform(seed), 0};
            continue;
        }
        double s = 0;
        for (size_t g = first[u]; g < first[u + 1]; g++)
            s += cnt[g];
        it[nit++] = (item){first[u], len, s, pd_wl_uniform(seed), 0};
    }
    return nit;
}

/* MEMTIS (Lee et al., SOSP'23): PEBS-like sampling (25x hemem's rate,
 * assumed), per-subpage counts, a 16-bin log2 histogram with the hot
 * threshold adapted every phase to the capacity (min 1), cooling every 20
 * phases (published ratio 2e6 / 1e5 samples), skewed units split to 4 KiB
 * (criterion assumed). Hot items move in, hottest first; the rest out
 * when room is needed. */
int pd_sim_bl_memtis(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast)
{
    size_t n = p->npages, nu = 0, splits = 0;
    timeline tl = {0};
    size_t *first = make_units(p, &nu);
    double *acc = malloc(n * sizeof *acc), *cnt = calloc(n, sizeof *cnt);
    unsigned char *split = first ? calloc(nu + 1, 1) : NULL;
    item *it = malloc(n * sizeof *it);
    int rc = -1;
    if (!first || !acc || !cnt || !split || !it || timeline_init(&tl, p) != 0)
        goto out;
    double period = sample_period(p, 100);
    uint64_t seed = seed_of(o, 0x6d656d);
    size_t used = first_touch(fast, n, cap_pages);
    for (int ph = 0; ph < tl.nph; ph++) {
        phase_accesses(&tl, ph, acc, NULL);
        for (size_t g = 0; g < n; g++)
            cnt[g] += poisson(acc[g] / period, &seed);
        size_t nit = memtis_items(first, nu, cnt, split, &splits, it, &seed);
        int thr = memtis_threshold(it, nit, cap_pages);
        for (size_t i = 0; i < nit; i++)
            it[i].hot = log2_bin(it[i].key) >= thr;
        migrate(fast, cap_pages, &used, it, nit, 1);
        if ((ph + 1) % MEMTIS_COOL_PH == 0)
            for (size_t g = 0; g < n; g++)
                cnt[g] = floor(cnt[g] / 2);
    }
    if (o && o->stats)
        o->stats->memtis_splits = splits;
    rc = 0;
out:
    free(tl.reg), free(first), free(acc), free(cnt), free(split), free(it);
    return rc;
}

/* ---- damon ------------------------------------------------------------------ */

#define DAMON_MIN_NR 10   /* min_nr_regions */
#define DAMON_MAX_NR 1000 /* max_nr_regions */
#define DAMON_SAMPLES 20  /* aggr_interval 100 ms / sample_interval 5 ms */

typedef struct {
    size_t start, end;
    double nr; /* nr_accesses */
} dregion;

static void damon_note(pd_sim_bl_stats *st, size_t nr)
{
    if (!st)
        return;
    if (nr < st->damon_regions_min)
        st->damon_regions_min = nr;
    if (nr > st->damon_regions_max)
        st->damon_regions_max = nr;
}

/* One pass of damon_merge_regions_of: adjacent regions whose nr_accesses
 * differ by at most thres merge (size-weighted) within sz_limit pages. */
static size_t damon_merge(dregion *r, size_t nr, double thres, size_t sz_limit)
{
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        size_t a = k ? r[k - 1].end - r[k - 1].start : 0, b = r[i].end - r[i].start;
        if (k && fabs(r[k - 1].nr - r[i].nr) <= thres && a + b <= sz_limit) {
            r[k - 1].nr = (r[k - 1].nr * (double)a + r[i].nr * (double)b) / (double)(a + b);
            r[k - 1].end = r[i].end;
        } else {
            r[k++] = r[i];
        }
    }
    return k;
}

/* kdamond_merge_regions: threshold max_nr_accesses / 10, doubled while
 * there are more than max_nr_regions. */
static size_t damon_merge_all(dregion *r, size_t nr, double max_acc, size_t sz_limit)
{
    double thres = floor(max_acc / 10);
    do {
        nr = damon_merge(r, nr, thres, sz_limit);
        thres = fmax(1, thres * 2);
    } while (nr > DAMON_MAX_NR && thres / 2 < max_acc);
    return nr;
}

/* kdamond_split_regions: each region of >= 2 pages in two at a random
 * 10..90 % point, unless there are more than max_nr_regions / 2. */
static size_t damon_split(dregion *r, size_t nr, dregion *tmp, uint64_t *seed)
{
    if (nr > DAMON_MAX_NR / 2)
        return nr;
    size_t k = 0;
    for (size_t i = 0; i < nr; i++) {
        size_t len = r[i].end - r[i].start, cut = len * (1 + pd_wl_rand(seed) % 9) / 10;
        if (len < 2) {
            tmp[k++] = r[i];
            continue;
        }
        cut = cut ? cut : 1;
        tmp[k++] = (dregion){r[i].start, r[i].start + cut, r[i].nr};
        tmp[k++] = (dregion){r[i].start + cut, r[i].end, r[i].nr};
    }
    memcpy(r, tmp, k * sizeof *r);
    return k;
}

/* One aggregation interval: 20 samples of one random page per region;
 * returns the largest nr_accesses. */
static double damon_sample(dregion *r, size_t nr, const double *acc, double ref, uint64_t *seed)
{
    double top = 0;
    for (size_t i = 0; i < nr; i++) {
        r[i].nr = 0;
        for (int s = 0; s < DAMON_SAMPLES; s++) {
            size_t g = r[i].start + (size_t)(pd_wl_rand(seed) % (r[i].end - r[i].start));
            r[i].nr += bit_seen(acc[g], ref, seed);
        }
        top = fmax(top, r[i].nr);
    }
    return top;
}

/* DAMON/DAMOS (Linux mm/damon): adaptive regions (10..1000), 20 samples
 * per aggregation interval = phase, merge (max / 10, size total / 10),
 * migrate_hot-like scheme (nr_accesses >= 1, assumed; hottest first, up to
 * the capacity, coldest out for room), then split in two (random
 * 10..90 %). */
int pd_sim_bl_damon(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast)
{
    size_t n = p->npages, nr = n < DAMON_MIN_NR ? n : DAMON_MIN_NR;
    size_t sz_limit = n / DAMON_MIN_NR ? n / DAMON_MIN_NR : 1;
    timeline tl = {0};
    double *acc = malloc(n * sizeof *acc), *scratch = malloc(n * sizeof *scratch);
    dregion *r = malloc((2 * DAMON_MAX_NR + 2) * sizeof *r), *tmp = malloc((2 * DAMON_MAX_NR + 2) * sizeof *tmp);
    item *it = malloc((2 * DAMON_MAX_NR + 2) * sizeof *it);
    pd_sim_bl_stats *st = o ? o->stats : NULL;
    int rc = -1;
    if (!acc || !scratch || !r || !tmp || !it || timeline_init(&tl, p) != 0)
        goto out;
    for (size_t i = 0; i < nr; i++)
        r[i] = (dregion){n * i / nr, n * (i + 1) / nr, 0};
    if (st)
        st->damon_regions_min = st->damon_regions_max = nr;
    uint64_t seed = seed_of(o, 0x64616d);
    size_t used = first_touch(fast, n, cap_pages);
    for (int ph = 0; ph < tl.nph; ph++) {
        phase_accesses(&tl, ph, acc, NULL);
        double top = damon_sample(r, nr, acc, ref_accesses(acc, n, scratch), &seed);
        nr = damon_merge_all(r, nr, top, sz_limit);
        damon_note(st, nr);
        for (size_t i = 0; i < nr; i++)
            it[i] = (item){r[i].start, r[i].end - r[i].start, r[i].nr, pd_wl_uniform(&seed), r[i].nr >= 1};
        migrate(fast, cap_pages, &used, it, nr, 0);
        nr = damon_split(r, nr, tmp, &seed);
        damon_note(st, nr);
    }
    rc = 0;
out:
    free(tl.reg), free(acc), free(scratch), free(r), free(tmp), free(it);
    return rc;
}

/* ---- colloid ---------------------------------------------------------------- */

int pd_sim_accessed_bit_hotness(const pd_sim_profile *p, uint64_t seed, int scans, double frac,
                                double *hot)
{
    size_t n = p->npages;
    timeline tl = {0};
    double *acc = malloc(n * sizeof *acc), *scratch = malloc(n * sizeof *scratch);
    double *samples = calloc(n, sizeof *samples);
    int rc = -1;
    if (!acc || !scratch || !samples || timeline_init(&tl, p) != 0)
        goto out;
    scans = scans > 0 ? scans : 64;
    frac = frac > 0 ? frac : 0.25;
    uint64_t s = seed * 2654435761ULL + 0x616263;
    memset(hot, 0, n * sizeof *hot);
    for (int ph = 0; ph < tl.nph; ph++) {
        int from = (int)((long long)ph * scans / tl.nph), to = (int)((long long)(ph + 1) * scans / tl.nph);
        if (from == to)
            continue; /* more phases than scans: no scan falls in this one */
        phase_accesses(&tl, ph, acc, NULL);
        double ref = ref_accesses(acc, n, scratch);
        for (int sc = from; sc < to; sc++)
            for (size_t g = 0; g < n; g++)
                if (pd_wl_uniform(&s) < frac)
                    samples[g]++, hot[g] += bit_seen(acc[g], ref, &s);
    }
    for (size_t g = 0; g < n; g++)
        hot[g] = samples[g] > 0 ? hot[g] / samples[g] : 0;
    rc = 0;
out:
    free(tl.reg), free(acc), free(scratch), free(samples);
    return rc;
}

#define COLLOID_EPS 0.05 /* hysteresis (assumed) */

typedef struct {
    const pd_sim_profile *p;
    const pd_sim_machine *m;
    const pd_sim_ranked *rk;
    double *fast;
    pd_sim_split split;
    double idle[PD_SIM_NTIERS]; /* idle latency over the access-pattern mix */
} colloid_ctx;

/* Idle latency of each tier, weighted by the objects' accesses. */
static void colloid_idle(colloid_ctx *c)
{
    const pd_sim_profile *p = c->p;
    double wsum = 0, lat[PD_SIM_NTIERS] = {0};
    for (int ob = 0; ob < p->nobjects; ob++) {
        const pd_sim_object *obj = &p->objects[ob];
        double w = 0;
        for (int t = 0; t < p->ntasks; t++)
            for (size_t g = obj->page_base; g < obj->page_base + obj->npages; g++)
                w += (double)(p->tasks[t].reads[g] + p->tasks[t].writes[g]);
        for (int t = 0; t < PD_SIM_NTIERS; t++)
            lat[t] += w * pd_sim_pattern_latency(&c->m->tier[t], obj->pattern);
        wsum += w;
    }
    for (int t = 0; t < PD_SIM_NTIERS; t++)
        c->idle[t] = wsum > 0 ? lat[t] / wsum : c->m->tier[t].lat_seq_ns;
}

/* With the hottest k pages fast: 1 when the fast tier's loaded latency
 * stays within the slow tier's (+ hysteresis), 0 when not, -1 on OOM. */
static int colloid_ok(colloid_ctx *c, size_t k)
{
    memset(c->fast, 0, c->p->npages * sizeof *c->fast);
    for (size_t j = 0; j < k; j++)
        c->fast[c->rk[j].page] = 1;
    pd_sim_split_from_pages(&c->split, c->p, c->fast, NULL);
    double u[PD_SIM_NTIERS];
    if (pd_sim_phase0_stretch(c->m, c->p, &c->split, u) != 0)
        return -1;
    return u[PD_SIM_FAST] * c->idle[PD_SIM_FAST] <= (1 + COLLOID_EPS) * u[PD_SIM_SLOW] * c->idle[PD_SIM_SLOW];
}

/* Largest k in [0, kmax] that colloid_ok accepts (the fast tier's latency
 * grows with k), or -1 on OOM. */
static long long colloid_balance(colloid_ctx *c, size_t kmax)
{
    int ok = colloid_ok(c, kmax);
    if (ok != 0)
        return ok < 0 ? -1 : (long long)kmax;
    size_t lo = 0, hi = kmax; /* hi fails */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((ok = colloid_ok(c, mid)) < 0)
            return -1;
        *(ok ? &lo : &hi) = mid;
    }
    return (long long)lo;
}

/* Colloid (Vuppalapati and Agarwal, SOSP'24): pages ranked by sampled
 * accessed-bit hotness (64 scans x 25 %, as hot-first); the hottest k go
 * to fast memory, k the largest <= min(cap, npages) at which the fast
 * tier's loaded latency (u_t x idle latency, as Colloid measures with CHA
 * counters: here exec_model's phase-0 stretch on the real traffic) stays
 * within 5 % (assumed) of the slow tier's. The rest is held back. */
int pd_sim_bl_colloid(const pd_sim_profile *p, const pd_sim_machine *m, size_t cap_pages,
                      const pd_sim_bl_opts *o, double *fast, size_t *held_back)
{
    size_t n = p->npages, kmax = cap_pages < n ? cap_pages : n;
    colloid_ctx c = {.p = p, .m = m, .fast = fast};
    double *hot = malloc(n * sizeof *hot);
    pd_sim_ranked *rk = malloc(n * sizeof *rk);
    int rc = -1;
    *held_back = 0;
    if (!hot || !rk || pd_sim_split_init(&c.split, p) != 0 ||
        pd_sim_accessed_bit_hotness(p, o ? o->seed : 0, 0, 0, hot) != 0)
        goto out;
    uint64_t seed = seed_of(o, 0x636f6c);
    for (size_t g = 0; g < n; g++)
        rk[g] = (pd_sim_ranked){hot[g], pd_wl_uniform(&seed), g};
    qsort(rk, n, sizeof *rk, pd_sim_cmp_ranked_desc);
    c.rk = rk;
    colloid_idle(&c);
    long long k = colloid_balance(&c, kmax);
    if (k < 0 || colloid_ok(&c, (size_t)k) < 0) /* leaves fast = the top k */
        goto out;
    *held_back = kmax - (size_t)k;
    rc = 0;
out:
    pd_sim_split_free(&c.split);
    free(hot), free(rk);
    return rc;
}
