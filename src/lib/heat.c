/* A task's sampled heat (rt_task.hot: its regions, hottest first) across
 * instances: smoothed while the input stays the same, and remembered per
 * input, so that a revisited input is planned from its own heat rather than
 * from the last input's.
 *
 * One instance's sampled counts are noisy (a region's count is a few
 * intervals), and a plan re-optimised on fresh noise always looks better
 * than the placement chosen on the last noise: that is the churn of an
 * unchanged input. So each region's heat is the running mean over up to
 * PADDISER_HEAT_WINDOW instances of the input (default 4; then an average
 * with that weight for the newest), except where a region's count moved
 * beyond its noise (heat_changed: the pattern really shifted there, and the
 * new heat counts alone). Each object's total stays what the last instance
 * measured: only the distribution within it is smoothed, so Eq. 1 and the
 * per-object factors see measured totals. An input this run has no heat of
 * yet takes an earlier run's, where the profile store kept one
 * (profile_store.h): as the prior its first sampled instance is smoothed
 * with, and as the heat it is planned with before that. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/placement.h"
#include "lib/profile_store.h"
#include "lib/runtime_internal.h"

#define RT_HEAT_WINDOW 4

/* Instances a region's heat is averaged over (1: the last alone). */
static int heat_window(void)
{
    const char *v = getenv("PADDISER_HEAT_WINDOW");
    unsigned long long n;
    if (v && *v && pd_parse_u64(v, &n) && n >= 1 && n <= RT_HISTORY)
        return (int)n;
    return RT_HEAT_WINDOW;
}

/* Order of a task's regions by place: object, then offset. */
static int cmp_hot_place(const void *a, const void *b)
{
    const rt_hot *x = a, *y = b;
    if (x->object != y->object)
        return x->object < y->object ? -1 : 1;
    return x->off_frac < y->off_frac ? -1 : x->off_frac > y->off_frac;
}

/* The same region in two heats: one object, offsets within half the
 * shorter length. Regions of one heat never overlap, so this tells them
 * apart; exact equality would not, because the profile store keeps
 * fractions at 10 significant digits (a region stored as 0.03124952317 is
 * not the run's double), and every stored region came back as another one
 * beside the run's: faded copies piled up in the store, run after run. */
static int same_place(const rt_hot *x, const rt_hot *y)
{
    return x->object == y->object && fabs(x->off_frac - y->off_frac) < 0.5 * fmin(x->len_frac, y->len_frac);
}

/* A region's count (intervals it was touched in) moved by more than its
 * sampling noise allows (2.5 sigma of a Poisson count). A thinned
 * instance's counts (w > 1, pd_sampler_count_weight) tell nothing of the
 * kind: each spell arms one slice of 1 in k samples, so a region of a
 * sample or two is armed in a few spells of the instance or in none, and
 * its count is 0 or k times a spell's intervals. Its spread is the spells',
 * far over a Poisson count's. Taken as if it were one, the test threw out
 * stored heat a thinned instance had not armed and put one slice's hits in
 * place of the heat before (the simulator's bfs study, a thinned first
 * instance smoothed with a stored heat: -5.2% against hot-first with the
 * test, -0.6% and +1.5% without; docs/runtime-measurements.md). Those
 * counts only ever blend, at their weight. */
static int heat_changed(uint64_t now, uint64_t before, double w)
{
    if (w > 1)
        return 0;
    /* w is 1 here (rt_heat_merge keeps it >= 1): whole spells, counts of
     * faults; variance now + before, plus one so that 0 against 0 passes */
    double d = (double)now - (double)before;
    return d * d > 6.25 * ((double)now + (double)before + 1);
}

/* A region in the earlier heat but not sampled now keeps that heat, faded
 * by the newest instance's weight w, unless it was too hot for a zero count
 * now to be noise. */
static int keep_faded(rt_task *t, size_t *cap, rt_hot o, double w, double noise)
{
    if (heat_changed(0, o.count, noise))
        return 0;
    o.touches *= 1 - w;
    o.accesses *= 1 - w;
    o.count = 0;
    return rt_hot_push(t, cap, o);
}

/* The newest instance's weight against `prior` earlier ones: the running
 * mean's 1 / (prior + 1), at least 1 / window; an instance whose counts are
 * thinned (noise: their mean weight, pd_sampler_count_weight) tells that
 * many times less per region, so it weighs as much less (inverse
 * variance). */
static double newest_weight(int prior, int window, double noise)
{
    int p = prior < window - 1 ? prior : window - 1;
    return p > 0 ? 1.0 / (1.0 + p * noise) : 1.0;
}

/* t->hot (this instance's regions) blended with base, the heat of `prior`
 * earlier instances of the same input, the newest at weight w. */
static int smooth(rt_task *t, size_t *cap, rt_hot *base, size_t nbase, int prior, double w, double noise)
{
    if (!nbase || prior <= 0 || !(w < 1))
        return 0;
    qsort(base, nbase, sizeof *base, cmp_hot_place);
    if (t->nhot)
        qsort(t->hot, t->nhot, sizeof *t->hot, cmp_hot_place);
    size_t nnew = t->nhot, j = 0;
    for (size_t i = 0; i < nnew; i++) {
        rt_hot *h = &t->hot[i];
        while (j < nbase && !same_place(&base[j], h) && cmp_hot_place(&base[j], h) < 0) {
            if (keep_faded(t, cap, base[j++], w, noise) != 0)
                return -1;
            h = &t->hot[i]; /* the push may have moved the list */
        }
        double ot = 0, oa = 0;
        uint64_t oc = 0;
        if (j < nbase && same_place(&base[j], h)) {
            ot = base[j].touches;
            oa = base[j].accesses;
            oc = base[j].count;
            j++;
        }
        if (heat_changed(h->count, oc, noise))
            continue; /* this instance's heat alone */
        h->touches = w * h->touches + (1 - w) * ot;
        h->accesses = w * h->accesses + (1 - w) * oa;
        /* a thinned instance's count (k times a slice's faults), kept as it
         * was, made the next instance's change test see a region up to k
         * times hotter than its heat: blended as the heat is */
        if (noise > 1)
            h->count = (uint64_t)llround(w * (double)h->count + (1 - w) * (double)oc);
    }
    for (; j < nbase; j++)
        if (keep_faded(t, cap, base[j], w, noise) != 0)
            return -1;
    /* Per object: back to the total this instance measured. */
    if (t->nhot)
        qsort(t->hot, t->nhot, sizeof *t->hot, cmp_hot_place);
    for (size_t i = 0, k; i < t->nhot; i = k) {
        double sum = 0;
        for (k = i; k < t->nhot && t->hot[k].object == t->hot[i].object; k++)
            sum += t->hot[k].accesses;
        int ob = t->hot[i].object;
        double raw = (size_t)ob < t->nacc ? t->last_acc[ob] : 0;
        if (!(sum > 0) || !(raw > 0))
            continue; /* not touched this time: the earlier heat, faded, stays */
        for (size_t q = i; q < k; q++) {
            t->hot[q].touches *= raw / sum;
            t->hot[q].accesses *= raw / sum;
        }
    }
    return 0;
}

/* An earlier run's heat of `input` from the profile store, one row per
 * region: a store written before same_place (2026-12-05) holds faded copies
 * of a region beside it, of which the hottest is kept. */
static int stored_heat_once(rt_task *t, uint64_t input, rt_hot **hot, size_t *nhot, double **acc, size_t *nacc, int *n)
{
    if (!rt_store_heat(t->id, input, hot, nhot, acc, nacc, n))
        return 0;
    rt_hot *h = *hot;
    size_t k = 0;
    if (*nhot)
        qsort(h, *nhot, sizeof *h, cmp_hot_place);
    for (size_t i = 0; i < *nhot; i++) {
        if (k && same_place(&h[k - 1], &h[i])) {
            if (h[i].accesses > h[k - 1].accesses)
                h[k - 1] = h[i];
            continue;
        }
        h[k++] = h[i];
    }
    *nhot = k;
    rt_hot_sort_hottest(h, k); /* as a task's heat is kept */
    return 1;
}

/* ---- memory per input ---------------------------------------------------- */

static rt_heat_entry *find_entry(rt_task *t, uint64_t input)
{
    for (int i = 0; i < RT_HEAT_INPUTS; i++)
        if (t->heat_mem[i].hot && t->heat_mem[i].input == input)
            return &t->heat_mem[i];
    return NULL;
}

static void entry_clear(rt_heat_entry *e)
{
    free(e->hot);
    free(e->acc);
    memset(e, 0, sizeof *e);
}

/* Keeps (input, hot, acc, n, whole) in the least recently stored slot;
 * takes hot. */
static void stash(rt_task *t, uint64_t input, rt_hot *hot, size_t nhot, const double *acc, int n, int whole)
{
    if (!hot || !nhot || !input) {
        free(hot);
        return;
    }
    rt_heat_entry *e = find_entry(t, input); /* the same input: replaced */
    for (int i = 0; i < RT_HEAT_INPUTS && !e; i++)
        if (!t->heat_mem[i].hot)
            e = &t->heat_mem[i];
    if (!e) { /* the least recently stored */
        e = &t->heat_mem[0];
        for (int i = 1; i < RT_HEAT_INPUTS; i++)
            if (t->heat_mem[i].stamp < e->stamp)
                e = &t->heat_mem[i];
    }
    entry_clear(e);
    double *copy = t->nacc ? malloc(t->nacc * sizeof *copy) : NULL;
    if (t->nacc && !copy) {
        free(hot); /* out of memory: forgotten, planned from other heat */
        return;
    }
    if (copy)
        memcpy(copy, acc, t->nacc * sizeof *copy);
    *e = (rt_heat_entry){input, hot, nhot, copy, t->nacc, n, whole, ++t->heat_clock};
}

static int set_hot_acc(rt_task *t, const double *acc, size_t nacc)
{
    if (!t->hot_acc && t->nacc && !(t->hot_acc = calloc(t->nacc, sizeof *t->hot_acc)))
        return -1;
    for (size_t o = 0; o < t->nacc; o++)
        t->hot_acc[o] = o < nacc ? acc[o] : 0;
    return 0;
}

int rt_heat_merge(rt_task *t, size_t *cap, rt_hot *old, size_t nold, uint64_t ran, double noise)
{
    rt_hot *base = NULL;
    size_t nbase = 0, nbase_acc = 0;
    int prior = 0, whole = 0; /* whole instances of this run in the prior */
    double *base_acc = NULL, *own_acc = NULL; /* the prior's per-object totals */
    if (nold && t->hot_input == ran) {
        base = old, nbase = nold, prior = t->hot_n, whole = t->hot_whole;
        base_acc = t->hot_acc, nbase_acc = t->nacc;
    } else {
        stash(t, t->hot_input, old, nold, t->hot_acc, t->hot_n, t->hot_whole);
        rt_heat_entry *e = find_entry(t, ran);
        if (e) {
            base = e->hot, nbase = e->nhot, prior = e->n, whole = e->whole;
            base_acc = own_acc = e->acc, nbase_acc = e->nacc;
            e->hot = NULL;
            e->acc = NULL;
            entry_clear(e);
        } else if (stored_heat_once(t, ran, &base, &nbase, &own_acc, &nbase_acc, &prior)) {
            base_acc = own_acc;
        }
    }
    int window = heat_window();
    noise = noise >= 1 ? noise : 1;
    double w = window > 1 ? newest_weight(prior, window, noise) : 1.0;
    /* Whole instances keep their measured totals (Eq. 1 and the per-object
     * factors rest on them). A thinned one's totals are as noisy as its
     * regions (an object no fault of the slice hit would read 0): with a
     * prior they are blended as its regions are. */
    if (noise > 1 && w < 1 && nbase && base_acc)
        for (size_t o = 0; o < t->nacc; o++)
            t->last_acc[o] = w * t->last_acc[o] + (1 - w) * (o < nbase_acc ? base_acc[o] : 0);
    /* Thinned for the store, and the store had no heat of this task (a
     * task the stored run did not have): a thin slice's heat alone is no
     * profile. Dropped; the task has no base yet, so the next instance is
     * sampled, and whole (tasks.c). */
    t->thin_blind = noise > 1 && !nbase && rt.inst_store_thin;
    if (t->thin_blind) {
        t->nhot = 0;
        memset(t->last_acc, 0, t->nacc * sizeof *t->last_acc);
    }
    int rc = smooth(t, cap, base, nbase, prior, w, noise);
    free(base);
    free(own_acc);
    t->hot_input = ran;
    t->hot_n = prior + 1 < window ? prior + 1 : window;
    t->hot_whole = whole + (noise > 1 ? 0 : 1);
    if (rc == 0 && set_hot_acc(t, t->last_acc, t->nacc) != 0)
        rc = -1;
    return rc;
}

void rt_heat_select(rt_task *t, uint64_t next)
{
    if (!next || t->hot_input == next)
        return;
    rt_heat_entry *e = find_entry(t, next), in;
    if (e) {
        in = *e; /* taken out of its slot */
        memset(e, 0, sizeof *e);
    } else if (!stored_heat_once(t, next, &in.hot, &in.nhot, &in.acc, &in.nacc, &in.n)) {
        return;
    }
    rt.layout_gen++; /* another input's heat */
    if (t->hot_acc)
        stash(t, t->hot_input, t->hot, t->nhot, t->hot_acc, t->hot_n, t->hot_whole);
    else
        free(t->hot);
    t->hot = in.hot;
    t->nhot = in.nhot;
    t->hot_input = next;
    t->hot_n = in.n;
    t->hot_whole = e ? in.whole : 0; /* a stored heat: none of this run */
    if (set_hot_acc(t, in.acc, in.nacc) != 0) { /* out of memory: factors of 1 */
        free(t->hot);
        t->hot = NULL;
        t->nhot = 0;
    }
    free(in.acc);
}

void rt_heat_free(rt_task *t)
{
    for (int i = 0; i < RT_HEAT_INPUTS; i++)
        entry_clear(&t->heat_mem[i]);
    free(t->hot_acc);
    t->hot_acc = NULL;
}
