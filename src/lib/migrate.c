/* Sync point, last step: each task's hottest sampled regions (by the
 * next-instance weights, the order of its bytes curve) up to its planned
 * bytes go to the fast tier, every other registered page to the slow tier.
 * Order matters when fast memory is short: pages leaving the fast tier go
 * first, then the planned pages are promoted hottest first (the tasks
 * interleaved by rank within their own plan, so a shortfall trims every
 * task's coldest pages alike); where the backend can (pd_backend.promote),
 * refused pages make room by demoting what the plan no longer gives fast
 * memory, then the plan's own coldest pages. With THP kept, the plan is made
 * of whole 2 MB units. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/page_runs.h"
#include "lib/plan_runs.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

typedef struct {
    void **v;
    size_t n, cap;
} page_list;

static int page_push(page_list *l, uintptr_t p)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 1024;
        void **np = realloc(l->v, ncap * sizeof *np);
        if (!np)
            return -1;
        l->v = np;
        l->cap = ncap;
    }
    l->v[l->n++] = (void *)p;
    return 0;
}

/* Index of the first page >= p in a sorted list. */
static size_t lower_bound(const page_list *l, uintptr_t p)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)l->v[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static const task_pred *sort_tp; /* qsort context; rt.lock is held */

static int cmp_weight_desc(const void *a, const void *b)
{
    const rt_hot *h = sort_tp->task->hot;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double wx = rt_hot_weight(sort_tp, &h[x]), wy = rt_hot_weight(sort_tp, &h[y]);
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return x < y ? -1 : x > y; /* ties: the order of the hot list */
}

/* A planned page and its rank within its task's plan (0 = hottest, 1 =
 * coldest): the promotion order across tasks. The plan itself is kept as
 * ranked runs (plan_runs.h); single pages only for the pages that move. */
typedef struct {
    uintptr_t page;
    double rank;
} plan_page;

typedef struct {
    plan_page *v;
    size_t n, cap;
} plan_list;

/* Ranks after the plans' own pages (0 - 1): pages a room fill took, then
 * pages kept where they were. */
#define RANK_ROOM 1.5
#define RANK_KEPT 2.0

static int plan_push(plan_list *l, uintptr_t p, double rank)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 1024;
        plan_page *np = realloc(l->v, ncap * sizeof *np);
        if (!np)
            return -1;
        l->v = np;
        l->cap = ncap;
    }
    l->v[l->n++] = (plan_page){p, rank};
    return 0;
}

static uintptr_t page_up(uintptr_t a) { return (a + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1); }

/* Pages [lo, hi) of a region, or with THP kept the whole 2 MB units it
 * touches (within the object's pages), while the budget lasts, as the
 * next pages (*seq on) of the task's sequence: a unit is taken only whole,
 * so a task's fast bytes stay within its plan. units holds this task's
 * units so far (a region may share one with another). */
static int push_region(rt_plan_runs *out, const rt_object *o, uintptr_t lo, uintptr_t hi, size_t budget, size_t *used,
                       size_t *seq, page_list *units)
{
    if (rt.thp != PD_THP_KEEP) {
        uintptr_t p = lo & ~(uintptr_t)(RT_PAGE - 1);
        if (p >= hi || *used >= budget)
            return 0;
        size_t np = (hi - p + RT_PAGE - 1) / RT_PAGE, left = (budget - *used + RT_PAGE - 1) / RT_PAGE;
        size_t take = np < left ? np : left;
        if (rt_plan_runs_push(out, p, p + take * RT_PAGE, *seq) != 0)
            return -1;
        *seq += take;
        *used += take * RT_PAGE;
        return 0;
    }
    uintptr_t olo = (uintptr_t)o->addr & ~(uintptr_t)(RT_PAGE - 1), ohi = page_up((uintptr_t)o->addr + o->size);
    for (uintptr_t u = lo & ~(uintptr_t)(RT_THP_UNIT - 1); u < hi; u += RT_THP_UNIT) {
        int seen = 0;
        for (size_t k = 0; k < units->n && !seen; k++)
            seen = (uintptr_t)units->v[k] == u;
        if (seen)
            continue;
        if (*used + RT_THP_UNIT > budget)
            return 0;
        if (page_push(units, u) != 0)
            return -1;
        *used += RT_THP_UNIT;
        uintptr_t a = u < olo ? olo : u, b = u + RT_THP_UNIT < ohi ? u + RT_THP_UNIT : ohi;
        if (a < b) {
            if (rt_plan_runs_push(out, a, b, *seq) != 0)
                return -1;
            *seq += (b - a) / RT_PAGE;
        }
    }
    return 0;
}

/* A sampled region's bytes in its object as the object is now. */
static void region_bounds(const rt_object *o, const rt_hot *h, uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)o->addr + (uintptr_t)(h->off_frac * (double)o->size);
    *hi = (uintptr_t)o->addr + (uintptr_t)((h->off_frac + h->len_frac) * (double)o->size);
    if (*hi > (uintptr_t)o->addr + o->size)
        *hi = (uintptr_t)o->addr + o->size;
}

/* Pages of a task's hottest regions (by next-instance weight, the order of
 * its bytes curve) up to its planned bytes, hottest first, as one ranked
 * sequence: a run per region, O(samples) instead of O(pages) (at 512 MiB
 * of fast memory, building and sorting one entry per page took 13 - 24 ms
 * of a replan). */
static int select_task_pages(const task_pred *tp, size_t budget, rt_plan_runs *out)
{
    const rt_task *t = tp->task;
    if (!t->nhot || !budget)
        return 0;
    size_t *order = malloc(t->nhot * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < t->nhot; i++)
        order[i] = i;
    sort_tp = tp;
    qsort(order, t->nhot, sizeof *order, cmp_weight_desc);
    sort_tp = NULL;
    size_t used = 0, seq = 0, first = out->n;
    page_list units = {0};
    int rc = 0;
    for (size_t j = 0; j < t->nhot && used < budget && rc == 0; j++) {
        const rt_hot *h = &t->hot[order[j]];
        const rt_object *o = &rt.objects[h->object];
        if (!o->used || rt_hot_weight(tp, h) <= 0)
            continue;
        uintptr_t lo, hi;
        region_bounds(o, h, &lo, &hi);
        rc = push_region(out, o, lo, hi, budget, &used, &seq, &units);
    }
    rt_plan_runs_seal(out, first, seq);
    free(units.v);
    free(order);
    return rc;
}

/* A sampled region as a candidate for room the plans left, with its
 * benefit per page summed over the tasks whose heat it holds. */
typedef struct {
    uintptr_t lo, hi;
    double benefit; /* seconds an instance, per page on the fast tier */
} room_region;

static int cmp_room_bounds(const void *a, const void *b)
{
    const room_region *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int cmp_room_benefit(const void *a, const void *b)
{
    const room_region *x = a, *y = b;
    if (x->benefit != y->benefit)
        return x->benefit < y->benefit ? 1 : -1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every task's sampled regions (with a positive next-instance weight) as
 * candidates, the same region of several tasks once: by_benefit 0 values a
 * page by its heat (the next-instance weight, summed over the tasks: what
 * hot-first ranks by), 1 by its benefit, (T_slow - T_dram) times its share
 * of each task's heat (seconds an instance). Sorted by value, highest
 * first; *out NULL when there is none. */
static int collect_regions(const task_pred *p, int n, int by_benefit, room_region **out, size_t *nout)
{
    size_t cand = 0;
    *out = NULL;
    *nout = 0;
    for (int i = 0; i < n; i++)
        cand += p[i].task->nhot;
    if (!cand)
        return 0;
    room_region *rr = malloc(cand * sizeof *rr);
    if (!rr)
        return -1;
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const rt_task *t = p[i].task;
        double scale = 1;
        if (by_benefit) {
            double heat = 0;
            for (size_t j = 0; j < t->nhot; j++) {
                const rt_object *o = &rt.objects[t->hot[j].object];
                double w = rt_hot_weight(&p[i], &t->hot[j]);
                if (o->used && w > 0)
                    heat += w * ceil(t->hot[j].len_frac * (double)o->size / (double)RT_PAGE);
            }
            double span = p[i].t_slow - p[i].t_dram;
            if (!(heat > 0) || !(span > 0))
                continue;
            scale = span / heat;
        }
        for (size_t j = 0; j < t->nhot; j++) {
            const rt_object *o = &rt.objects[t->hot[j].object];
            double w = rt_hot_weight(&p[i], &t->hot[j]);
            if (!o->used || !(w > 0))
                continue;
            uintptr_t lo, hi;
            region_bounds(o, &t->hot[j], &lo, &hi);
            lo &= ~(uintptr_t)(RT_PAGE - 1);
            if (hi > lo)
                rr[k++] = (room_region){lo, hi, scale * w};
        }
    }
    if (k)
        qsort(rr, k, sizeof *rr, cmp_room_bounds);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && rr[m - 1].lo == rr[i].lo && rr[m - 1].hi == rr[i].hi)
            rr[m - 1].benefit += rr[i].benefit;
        else
            rr[m++] = rr[i];
    }
    if (m)
        qsort(rr, m, sizeof *rr, cmp_room_benefit);
    *out = rr;
    *nout = m;
    return 0;
}

/* A region's pages as the plan takes them: from lo (page-aligned) while
 * below hi. */
static uintptr_t region_end(uintptr_t lo, uintptr_t hi) { return lo + (hi - lo + RT_PAGE - 1) / RT_PAGE * RT_PAGE; }

/* The pages of [at, end) (page-aligned) not in `skip` (normalized), from
 * at upward, up to *room of them, added to out as runs; *room and *taken
 * count them. */
static int take_gaps(const rt_runs *skip, uintptr_t at, uintptr_t end, size_t *room, size_t *taken, rt_runs *out)
{
    for (size_t r = rt_runs_after(skip, at); at < end && *room; r++) {
        uintptr_t gap = r < skip->n && skip->v[r].lo < end ? skip->v[r].lo : end;
        if (gap > at) {
            size_t t = (gap - at) / RT_PAGE < *room ? (gap - at) / RT_PAGE : *room;
            if (rt_runs_add(out, at, at + t * RT_PAGE) != 0)
                return -1;
            *room -= t;
            *taken += t;
        }
        if (r >= skip->n || skip->v[r].lo >= end)
            break;
        at = skip->v[r].hi > at ? skip->v[r].hi : at;
    }
    return 0;
}

/* Pages of the regions rr[0..m), in their order, that are not in `skip`
 * (normalized) and have value above `floor`, until `room` pages (a page
 * that two regions hold counts twice): normalized in *extra. */
static int take_regions(const room_region *rr, size_t m, double floor, const rt_runs *skip, size_t room,
                        rt_runs *extra)
{
    size_t taken = 0;
    for (size_t i = 0; i < m && room && rr[i].benefit > floor; i++)
        if (take_gaps(skip, rr[i].lo, region_end(rr[i].lo, rr[i].hi), &room, &taken, extra) != 0)
            return -1;
    return rt_runs_normalize(extra); /* regions of different objects' strata can overlap at a page: once */
}

/* The pages a fill chose (normalized, none in fast) join the selection at
 * `rank` and fast (normalized again). */
static int add_pages(const rt_runs *extra, double rank, rt_plan_runs *sel, rt_runs *fast)
{
    if (!extra->n)
        return 0;
    for (size_t i = 0; i < extra->n; i++)
        if (rt_plan_runs_push_rank(sel, extra->v[i].lo, extra->v[i].hi, rank) != 0 ||
            rt_runs_add(fast, extra->v[i].lo, extra->v[i].hi) != 0)
            return -1;
    return rt_runs_normalize(fast);
}

/* The tasks' regions by benefit (collect_regions(..., 1)) for one
 * decision, built the first time a step asks: the room fill and the
 * displacement of kept pages, in the plan and in hot-first's set, read the
 * same list, which depends on the predictions alone. */
typedef struct {
    const task_pred *p;
    int n;
    int ready;
    room_region *v;
    size_t m;
} benefit_regions;

static int benefit_regions_get(benefit_regions *b)
{
    if (!b->ready && collect_regions(b->p, b->n, 1, &b->v, &b->m) != 0)
        return -1;
    b->ready = 1;
    return 0;
}

/* Room still left after the pages already fast are kept: the room that
 * pages several tasks share leave (every task's plan paid for a shared
 * page, the selection holds it once), or after a slow start. It goes to
 * sampled pages no plan chose, by benefit: a page saves a task about
 * (T_slow - T_dram) times its share of the task's heat each instance,
 * summed over the tasks that touch it (a shared page counts for each), and
 * is taken only if that, over the horizon, pays for its move (the
 * gain-versus-cost rule, page by page). (Run before the keeping, it
 * displaced first-touch pages, free to keep, by sampled pages that cost a
 * move: the study's runtime was 1-2% slower on bfs and dmrg on the same
 * profiles.) fast (sorted) and sel receive at most `room` pages; fast stays
 * sorted. With THP kept, fill_room_by_units instead (whole units only). */
static int fill_room_by_benefit(benefit_regions *br, size_t room, rt_plan_runs *sel, rt_runs *fast)
{
    if (!room)
        return 0;
    if (benefit_regions_get(br) != 0)
        return -1;
    double move = rt_migrate_seconds_per_page() / (double)rt_plan_horizon(); /* per instance */
    rt_runs extra = {0};
    int rc = take_regions(br->v, br->m, move, fast, room, &extra);
    if (rc == 0)
        rc = add_pages(&extra, RANK_ROOM, sel, fast);
    rt_runs_free(&extra);
    return rc;
}

/* A 2 MB unit as a candidate for the room a THP-kept plan leaves. */
typedef struct {
    uintptr_t unit;
    double benefit; /* seconds an instance, summed over its sampled pages */
    size_t cost;    /* its pages not on the fast tier yet (room it takes) */
} room_unit;

static int cmp_unit_addr(const void *a, const void *b)
{
    const room_unit *x = a, *y = b;
    return x->unit < y->unit ? -1 : x->unit > y->unit;
}

static int cmp_unit_value(const void *a, const void *b)
{
    const room_unit *x = a, *y = b;
    double vx = x->benefit / (double)x->cost, vy = y->benefit / (double)y->cost;
    if (vx != vy)
        return vx < vy ? 1 : -1;
    return x->unit < y->unit ? -1 : x->unit > y->unit;
}

static int covered_by_object(uintptr_t pg);

/* With THP kept, the room the task plans leave (each task's plan is whole
 * units within its bytes, so up to a unit per task stays free, and pages
 * several tasks share are placed once) goes to whole 2 MB units by
 * benefit, as fill_room_by_benefit does page by page: a unit's benefit is
 * its sampled pages' (summed over the tasks), it takes as much room as it
 * has pages not fast yet, and it is taken only whole, only if it fits, and
 * only if its benefit per page moved pays for the move over the horizon. */
static int fill_room_by_units(benefit_regions *br, size_t room, rt_plan_runs *sel, rt_runs *fast)
{
    size_t nu = 0, cap = 0;
    if (!room || benefit_regions_get(br) != 0)
        return room ? -1 : 0;
    const room_region *rr = br->v;
    size_t m = br->m;
    room_unit *u = NULL;
    int rc = 0;
    for (size_t i = 0; i < m && rc == 0; i++)
        for (uintptr_t un = rr[i].lo & ~(uintptr_t)(RT_THP_UNIT - 1); un < rr[i].hi && rc == 0; un += RT_THP_UNIT) {
            uintptr_t lo = rr[i].lo > un ? rr[i].lo : un, hi = rr[i].hi < un + RT_THP_UNIT ? rr[i].hi : un + RT_THP_UNIT;
            if (nu == cap) {
                size_t ncap = cap ? 2 * cap : 256;
                room_unit *nv = realloc(u, ncap * sizeof *nv);
                if (!nv) {
                    rc = -1;
                    break;
                }
                u = nv;
                cap = ncap;
            }
            u[nu++] = (room_unit){un, rr[i].benefit * (double)((hi - lo + RT_PAGE - 1) / RT_PAGE), 0};
        }
    size_t k = 0;
    if (rc == 0 && nu) {
        qsort(u, nu, sizeof *u, cmp_unit_addr);
        for (size_t i = 0; i < nu; i++) {
            if (k && u[k - 1].unit == u[i].unit)
                u[k - 1].benefit += u[i].benefit;
            else
                u[k++] = u[i];
        }
        rt_runs_cursor in_fast = rt_runs_cursor_at(fast); /* the units in address order */
        for (size_t i = 0; i < k; i++)
            for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT; pg += RT_PAGE)
                u[i].cost += covered_by_object(pg) && !rt_runs_cursor_has(&in_fast, pg);
        size_t j = 0;
        for (size_t i = 0; i < k; i++)
            if (u[i].cost)
                u[j++] = u[i];
        k = j;
        if (k)
            qsort(u, k, sizeof *u, cmp_unit_value);
    }
    double move = rt_migrate_seconds_per_page() / (double)rt_plan_horizon(); /* per instance */
    rt_runs extra = {0};
    for (size_t i = 0; i < k && rc == 0; i++) {
        if (u[i].cost > room || !(u[i].benefit / (double)u[i].cost > move))
            continue;
        room -= u[i].cost;
        rt_runs_cursor in_fast = rt_runs_cursor_at(fast);
        for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT && rc == 0; pg += RT_PAGE)
            if (covered_by_object(pg) && !rt_runs_cursor_has(&in_fast, pg))
                rc = rt_runs_add(&extra, pg, pg + RT_PAGE);
    }
    free(u);
    if (rc == 0)
        rc = rt_runs_normalize(&extra);
    if (rc == 0)
        rc = add_pages(&extra, RANK_ROOM, sel, fast);
    rt_runs_free(&extra);
    return rc;
}

static int cmp_plan_rank(const void *a, const void *b)
{
    const plan_page *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->page < y->page ? -1 : x->page > y->page;
}

/* A backend call that failed as a whole (out of memory before it decided
 * any page) reports fewer pages than it was given: they count as failed,
 * so that the sync point asks where its pages are (confirm_placed) rather
 * than take the plan as placed (a sim backend out of memory in `promote`
 * left the hot pages slow while the runtime kept them as fast, and the
 * next sync point kept that placement). */
static void count_unreported(pd_migrate_stats *st, size_t requested_before, size_t n, int rc)
{
    size_t told = st->pages_requested - requested_before;
    if (told >= n)
        return;
    size_t rest = n - told;
    st->pages_requested += rest;
    st->pages_failed += rest;
    if (rc == -ENOMEM)
        st->enomem += rest;
    else
        st->other_errors += rest;
}

static void move_chunked(page_list *l, int tier, pd_migrate_stats *total, size_t *ok_pages)
{
    const size_t chunk = 4096;
    for (size_t i = 0; i < l->n; i += chunk) {
        size_t n = l->n - i < chunk ? l->n - i : chunk;
        pd_migrate_stats st = {0};
        count_unreported(&st, 0, n, rt.backend->move(rt.backend, l->v + i, n, tier, &st));
        pd_migrate_stats_add(total, &st);
        if (ok_pages)
            *ok_pages += st.pages_moved;
    }
}

/* The pages this runtime has on the fast tier, as sorted runs: what the
 * last sync point promoted and kept there (per-page outcomes confirmed by a
 * query when a move reported failures). A sync point then moves only the
 * difference between this set and the new plan, so its cost follows what
 * changes, not what is registered; every other managed page is on the slow
 * tier since its registration (objects.c places it there) or its demotion.
 * Pages that an object no longer covers (shrunk, moved, unregistered) are
 * given back to the slow tier at the next sync point. */
static struct {
    uintptr_t *start;
    size_t *npages;
    size_t n;
    int unknown; /* after an allocation failure: any registered page may be fast */
} placed;

/* Bumped whenever the placed set changes: the reused decision below must
 * rest on the placement it judged. Outside `placed`, which resets clear. */
static unsigned placed_gen;

void rt_migrate_reset(void)
{
    placed_gen++;
    free(placed.start);
    free(placed.npages);
    memset(&placed, 0, sizeof placed);
}

/* placed := the pages of a sorted, duplicate-free list. */
static int placed_set(const page_list *fast)
{
    size_t runs = 0;
    for (size_t i = 0; i < fast->n; i++)
        if (i == 0 || (uintptr_t)fast->v[i] != (uintptr_t)fast->v[i - 1] + RT_PAGE)
            runs++;
    uintptr_t *start = malloc((runs ? runs : 1) * sizeof *start);
    size_t *npages = malloc((runs ? runs : 1) * sizeof *npages);
    if (!start || !npages) {
        free(start);
        free(npages);
        return -1;
    }
    size_t r = 0;
    for (size_t i = 0; i < fast->n; i++) {
        if (i == 0 || (uintptr_t)fast->v[i] != (uintptr_t)fast->v[i - 1] + RT_PAGE) {
            start[r] = (uintptr_t)fast->v[i];
            npages[r++] = 0;
        }
        npages[r - 1]++;
    }
    rt_migrate_reset();
    placed.start = start;
    placed.npages = npages;
    placed.n = runs;
    return 0;
}

static size_t placed_bytes(void)
{
    size_t np = 0;
    for (size_t r = 0; r < placed.n; r++)
        np += placed.npages[r];
    return np * RT_PAGE;
}

void rt_migrate_forget(const void *addr, size_t len)
{
    if (!placed.n || !len)
        return;
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(RT_PAGE - 1);
    uintptr_t hi = (uintptr_t)addr + len, past = (hi + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
    if (hi < lo || past < hi)
        hi = past = UINTPTR_MAX; /* up to the end of the address space */
    /* The runs less the pages that start in [lo, hi): run arithmetic, not
     * a list of every placed page (which made each registration cost about
     * the fast memory's size in pages). One run at most splits in two. */
    uintptr_t *start = malloc((placed.n + 1) * sizeof *start);
    size_t *npages = malloc((placed.n + 1) * sizeof *npages);
    if (!start || !npages) {
        free(start);
        free(npages);
        rt_migrate_reset();
        placed.unknown = 1; /* the next sync point submits every page, as if none were known */
        return;
    }
    size_t m = 0;
    for (size_t r = 0; r < placed.n; r++) {
        uintptr_t s = placed.start[r], e = s + placed.npages[r] * RT_PAGE;
        if (e <= lo || s >= hi) {
            start[m] = s;
            npages[m++] = placed.npages[r];
            continue;
        }
        if (s < lo) {
            start[m] = s;
            npages[m++] = (lo - s) / RT_PAGE;
        }
        if (e > past) {
            start[m] = past;
            npages[m++] = (e - past) / RT_PAGE;
        }
    }
    rt_migrate_reset();
    placed.start = start;
    placed.npages = npages;
    placed.n = m;
}

/* placed := a normalized set of runs. */
static int placed_set_runs(const rt_runs *r)
{
    uintptr_t *start = malloc((r->n ? r->n : 1) * sizeof *start);
    size_t *npages = malloc((r->n ? r->n : 1) * sizeof *npages);
    if (!start || !npages) {
        free(start);
        free(npages);
        return -1;
    }
    for (size_t i = 0; i < r->n; i++) {
        start[i] = r->v[i].lo;
        npages[i] = (r->v[i].hi - r->v[i].lo) / RT_PAGE;
    }
    rt_migrate_reset();
    placed.start = start;
    placed.npages = npages;
    placed.n = r->n;
    return 0;
}

static int add_fast_run(void *ctx, uintptr_t lo, uintptr_t hi) { return rt_runs_add(ctx, lo, hi); }

int rt_migrate_adopt(void)
{
    if (!rt.adopt_pending || !rt.backend)
        return PD_OK;
    rt.adopt_pending = 0;
    /* the placed set as runs, and the new objects' fast pages added as
     * runs: a backend that knows its runs (sim) answers per run, others
     * per page */
    rt_runs all = {0};
    int rc = PD_OK;
    for (size_t r = 0; r < placed.n && rc == PD_OK; r++)
        if (rt_runs_add(&all, placed.start[r], placed.start[r] + placed.npages[r] * RT_PAGE) != 0)
            rc = PD_ENOMEM;
    enum { BATCH = 4096 };
    void *pages[BATCH];
    int tier[BATCH];
    for (size_t o = 0; o < rt.nobjects && rc == PD_OK; o++) {
        rt_object *ob = &rt.objects[o];
        if (!ob->used || !ob->adopt)
            continue;
        uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1), hi = (uintptr_t)ob->addr + ob->size;
        size_t len = (size_t)((hi - lo + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1));
        pd_migrate_stats st = {0};
        /* out of memory: tried again at the next sync point, not lost */
        int prc = rt.backend->place(rt.backend, (void *)lo, len, ob->place_tier, &st);
        ob->adopt = pd_backend_out_of_memory(prc);
        rt.adopt_pending |= ob->adopt;
        if (placed.unknown)
            continue; /* every page is planned from scratch anyway */
        if (rt.backend->fast_runs) {
            if (rt.backend->fast_runs(rt.backend, (void *)lo, len, add_fast_run, &all) == 1)
                rc = PD_ENOMEM; /* -EINVAL: cannot tell, these pages are planned from scratch */
            continue;
        }
        for (uintptr_t pg = lo; pg < hi && rc == PD_OK;) {
            size_t n = 0;
            for (; n < BATCH && pg < hi; pg += RT_PAGE)
                pages[n++] = (void *)pg;
            if (rt.backend->query(rt.backend, pages, n, tier) != 0)
                continue; /* cannot tell: these pages are planned from scratch */
            for (size_t i = 0; i < n && rc == PD_OK; i++)
                if (tier[i] == PD_TIER_FAST && rt_runs_add(&all, (uintptr_t)pages[i], (uintptr_t)pages[i] + RT_PAGE) != 0)
                    rc = PD_ENOMEM;
        }
    }
    if (rc == PD_OK && !placed.unknown && (rt_runs_normalize(&all) != 0 || placed_set_runs(&all) != 0))
        rc = PD_ENOMEM;
    if (rc != PD_OK) {
        rt_migrate_reset();
        placed.unknown = 1;
    }
    rt.fast_bytes = placed_bytes();
    rt_runs_free(&all);
    return rc;
}

/* The registered objects' pages as runs, for covered_by_object's question
 * about many pages: O(pages + objects), not O(pages x objects) (a program
 * under `paddiser run` registers every large allocation). */
static int object_cover(rt_runs *out)
{
    for (size_t o = 0; o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1);
        uintptr_t hi = ((uintptr_t)ob->addr + ob->size + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
        if (ob->used && rt_runs_add(out, lo, hi) != 0)
            return -1;
    }
    return rt_runs_normalize(out);
}

/* The placed set as normalized runs into out; when the set is unknown,
 * every registered page. */
static int placed_runs(rt_runs *out)
{
    if (placed.unknown)
        return object_cover(out);
    for (size_t r = 0; r < placed.n; r++)
        if (rt_runs_add(out, placed.start[r], placed.start[r] + placed.npages[r] * RT_PAGE) != 0)
            return -1;
    return rt_runs_normalize(out);
}

/* The pages of a normalized set, in address order, into a page list. */
static int runs_to_pages(const rt_runs *r, page_list *out)
{
    for (size_t i = 0; i < r->n; i++)
        for (uintptr_t pg = r->v[i].lo; pg < r->v[i].hi; pg += RT_PAGE)
            if (page_push(out, pg) != 0)
                return -1;
    return 0;
}

static int covered_by_object(uintptr_t pg)
{
    for (size_t o = 0; o < rt.nobjects; o++) {
        const rt_object *ob = &rt.objects[o];
        uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1);
        if (ob->used && pg >= lo && pg < (uintptr_t)ob->addr + ob->size)
            return 1;
    }
    return 0;
}

/* pages[0..n) to the fast tier, hottest first. Demotion candidates,
 * coldest first: the placed pages the plan drops (normally already moved
 * out; those that would not move are tried again), then the submitted pages
 * themselves, coldest first. */
static int promote_pages(void **pages, size_t n, const page_list *dropped, pd_migrate_stats *st,
                         pd_migrate_stats *demoted)
{
    page_list hot = {pages, n, n};
    if (!rt.backend->promote) {
        move_chunked(&hot, PD_TIER_FAST, st, NULL);
        return 0;
    }
    page_list cold = {0};
    int rc = 0;
    for (size_t i = 0; i < dropped->n && rc == 0; i++)
        rc = page_push(&cold, (uintptr_t)dropped->v[i]);
    for (size_t i = n; i-- > 0 && rc == 0;)
        rc = page_push(&cold, (uintptr_t)pages[i]);
    if (rc == 0) {
        size_t before = st->pages_requested;
        count_unreported(st, before, n, rt.backend->promote(rt.backend, pages, n, cold.v, cold.n, st, demoted));
    }
    free(cold.v);
    return rc;
}

/* The plan's new pages (not yet placed) to the fast tier. Where some do not
 * fit (the node or the budget is short), the whole plan once more in rank
 * order, so that the backend can trade a placed but colder planned page for
 * a hotter new one: the rare case pays for the whole plan, the common one
 * only for what changed. */
static int promote_plan(const rt_plan_runs *sel, const page_list *hot_new, const page_list *dropped,
                        pd_migrate_stats *st, pd_migrate_stats *demoted)
{
    pd_migrate_stats first = {0};
    if (promote_pages(hot_new->v, hot_new->n, dropped, &first, demoted) != 0)
        return -1;
    if (!first.pages_failed) {
        *st = first;
        return 0;
    }
    /* the whole plan in rank order */
    plan_list byrank = {0};
    int rc = 0;
    for (size_t i = 0; i < sel->n && rc == 0; i++)
        for (uintptr_t pg = sel->v[i].lo; pg < sel->v[i].hi && rc == 0; pg += RT_PAGE)
            rc = plan_push(&byrank, pg, rt_plan_run_rank(&sel->v[i], pg));
    if (rc == 0 && byrank.n > 1)
        qsort(byrank.v, byrank.n, sizeof *byrank.v, cmp_plan_rank);
    page_list all = {0};
    for (size_t i = 0; i < byrank.n && rc == 0; i++)
        rc = page_push(&all, byrank.v[i].page);
    free(byrank.v);
    if (rc == 0) {
        pd_migrate_stats again = {0}, dem2 = {0};
        rc = promote_pages(all.v, all.n, dropped, &again, &dem2);
        again.bytes_moved += first.bytes_moved; /* the first pass's moves happened too */
        *st = again;
        pd_migrate_stats_add(demoted, &dem2);
    }
    free(all.v);
    return rc;
}

/* After a move that reported failures: which of the pages that were or
 * were to be fast really are (one query of those pages, not of every
 * registered page). The placed set is then exactly those; *placed_now
 * receives them, sorted, for the caller to free. */
static int confirm_placed(const rt_runs *before, const rt_runs *fast, page_list *placed_now)
{
    rt_runs both = {0};
    page_list all = {0};
    int rc = 0;
    for (size_t i = 0; i < before->n && rc == 0; i++)
        rc = rt_runs_add(&both, before->v[i].lo, before->v[i].hi);
    for (size_t i = 0; i < fast->n && rc == 0; i++)
        rc = rt_runs_add(&both, fast->v[i].lo, fast->v[i].hi);
    if (rc == 0 && (rt_runs_normalize(&both) != 0 || runs_to_pages(&both, &all) != 0))
        rc = -1;
    rt_runs_free(&both);
    int *tier = rc == 0 ? malloc((all.n ? all.n : 1) * sizeof *tier) : NULL;
    if (!tier || rt.backend->query(rt.backend, all.v, all.n, tier) != 0) {
        free(tier);
        free(all.v);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < all.n; i++)
        if (tier[i] == PD_TIER_FAST && covered_by_object((uintptr_t)all.v[i]))
            all.v[k++] = all.v[i];
    all.n = k;
    rc = placed_set(&all); /* in address order, each page once */
    free(tier);
    if (rc == 0)
        *placed_now = all;
    else
        free(all.v);
    return rc;
}

/* A set of fast pages as share_under asks it: how many lie in [lo, hi),
 * and how many there are. A sorted page list or a set of runs. */
typedef struct {
    const page_list *pages;
    const rt_runs *runs;
} fast_set;

static size_t fast_set_count(const fast_set *f, uintptr_t lo, uintptr_t hi)
{
    return f->runs ? rt_runs_count(f->runs, lo, hi) : lower_bound(f->pages, hi) - lower_bound(f->pages, lo);
}

static size_t fast_set_size(const fast_set *f) { return f->runs ? rt_runs_pages(f->runs) : f->pages->n; }

/* Fast share of a task's next-instance accesses if exactly the pages of
 * fast were on the fast tier: its sampled regions weighted as in its bytes
 * curve (per-page weight times pages); a task with nothing sampled gets
 * the fast share of all registered pages. *fast_bytes: the fast bytes
 * inside its regions. */
static double share_of(const task_pred *tp, const fast_set *fast, size_t total_pages, size_t *fast_bytes)
{
    const rt_task *t = tp->task;
    double all = 0, on = 0;
    size_t nb = 0;
    for (size_t j = 0; j < t->nhot; j++) {
        const rt_hot *h = &t->hot[j];
        const rt_object *o = &rt.objects[h->object];
        double w = rt_hot_weight(tp, h);
        uintptr_t lo, hi;
        if (!o->used || !(w > 0))
            continue;
        region_bounds(o, h, &lo, &hi);
        lo &= ~(uintptr_t)(RT_PAGE - 1);
        if (hi <= lo)
            continue;
        size_t np = (size_t)((hi - lo + RT_PAGE - 1) / RT_PAGE);
        size_t nf = fast_set_count(fast, lo, hi);
        all += w * (double)np;
        on += w * (double)nf;
        nb += nf * RT_PAGE;
    }
    *fast_bytes = nb;
    if (all > 0)
        return on / all;
    if (!total_pages)
        return 0;
    size_t nf = fast_set_size(fast);
    return nf >= total_pages ? 1.0 : (double)nf / (double)total_pages;
}

/* share_of for a sorted page list. */
static double share_under(const task_pred *tp, const page_list *fast, size_t total_pages, size_t *fast_bytes)
{
    fast_set f = {fast, NULL};
    return share_of(tp, &f, total_pages, fast_bytes);
}

/* share_of for a normalized set of runs. */
static double share_under_runs(const task_pred *tp, const rt_runs *fast, size_t total_pages, size_t *fast_bytes)
{
    fast_set f = {NULL, fast};
    return share_of(tp, &f, total_pages, fast_bytes);
}

/* The keep rule: up to `room` pages already fast (covered) that fast does
 * not hold join it, in address order, ranked after every planned page:
 * keeping them costs no move. 0 or -1 (out of memory). */
static int keep_placed(const rt_runs *covered, size_t room, rt_plan_runs *sel, rt_runs *fast)
{
    rt_runs cand = {0}, keep = {0};
    int rc = rt_runs_subtract(covered, fast, &cand);
    for (size_t i = 0; i < cand.n && room && rc == 0; i++) {
        size_t np = (cand.v[i].hi - cand.v[i].lo) / RT_PAGE, t = np < room ? np : room;
        rc = rt_runs_add(&keep, cand.v[i].lo, cand.v[i].lo + t * RT_PAGE);
        room -= t;
    }
    if (rc == 0)
        rc = rt_runs_normalize(&keep);
    if (rc == 0)
        rc = add_pages(&keep, RANK_KEPT, sel, fast);
    rt_runs_free(&cand);
    rt_runs_free(&keep);
    return rc;
}

static double tasks_gain_trust(const task_pred *p, int n);

/* The pages keep_placed kept hold room for free, but they may be cold
 * (first touch put them there, not the heat): at a small capacity the room
 * they hold is much of the budget (spgemm at 10 %: 25 - 40 % of it, and the
 * study's runtime then scored 8 - 10 ms against hot-first's 5.8; docs/sim.md).
 * A kept page that no sampled touch was seen on gives its room to a
 * sampled page not yet fast whose benefit, at the rule's trust, beats it by
 * more than both moves cost over the horizon (the promotion and the kept
 * page's demotion), the most beneficial first; the kept pages leave in
 * address order. Kept pages with sampled touches stay: where the sampler
 * under-weights a page (bfs's `level`), displacing them by benefit cost the
 * study 2 - 4 % at 50 - 70 % capacity. Runs after the keeping and the room
 * fill, so room nobody holds is still filled first. */
static int displace_kept(benefit_regions *br, rt_plan_runs *sel, rt_runs *fast)
{
    rt_runs kept = {0}, regions = {0}, unseen = {0}, extra = {0}, out = {0}, rest = {0};
    rt_plan_runs sel_rest = {0};
    int rc = 0;
    for (size_t i = 0; i < sel->n && rc == 0; i++)
        if (!sel->v[i].len && sel->v[i].rank == RANK_KEPT)
            rc = rt_runs_add(&kept, sel->v[i].lo, sel->v[i].hi);
    if (rc == 0 && !kept.n)
        return 0;
    if (rc == 0 && (rt_runs_normalize(&kept) != 0 || benefit_regions_get(br) != 0))
        rc = -1;
    const room_region *rr = br->v;
    size_t m = br->m;
    for (size_t i = 0; i < m && rc == 0; i++)
        rc = rt_runs_add(&regions, rr[i].lo, region_end(rr[i].lo, rr[i].hi));
    if (rc == 0)
        rc = rt_runs_normalize(&regions);
    if (rc == 0)
        rc = rt_runs_subtract(&kept, &regions, &unseen);
    size_t nz = rc == 0 ? rt_runs_pages(&unseen) : 0, left = nz, j = 0;
    if (rc == 0 && m && nz) {
        /* per instance, in benefit as the rule counts it (at its trust) */
        double trust = tasks_gain_trust(br->p, br->n);
        double both = 2.0 * rt_migrate_seconds_per_page() / (double)rt_plan_horizon() /
                      (isnan(trust) ? 1.0 : fmax(trust, 1e-6));
        /* rr is by benefit, highest first; a page two regions hold is
         * taken for each (and a kept page leaves for each) */
        for (size_t i = 0; i < m && left && rc == 0 && rr[i].benefit > both; i++)
            rc = take_gaps(fast, rr[i].lo, region_end(rr[i].lo, rr[i].hi), &left, &j, &extra);
    }
    if (rc == 0 && j) {
        /* the first j unseen pages leave; the extra pages join */
        for (size_t i = 0, n = j; i < unseen.n && n && rc == 0; i++) {
            size_t np = (unseen.v[i].hi - unseen.v[i].lo) / RT_PAGE, t = np < n ? np : n;
            rc = rt_runs_add(&out, unseen.v[i].lo, unseen.v[i].lo + t * RT_PAGE);
            n -= t;
        }
        if (rc == 0 && (rt_runs_normalize(&out) != 0 || rt_runs_normalize(&extra) != 0 ||
                        rt_runs_subtract(fast, &out, &rest) != 0 || rt_plan_runs_subtract(sel, &out, &sel_rest) != 0))
            rc = -1;
        if (rc == 0) {
            rt_runs_free(fast);
            *fast = rest;
            rest = (rt_runs){0};
            rt_plan_runs_free(sel);
            *sel = sel_rest;
            sel_rest = (rt_plan_runs){0};
            rc = add_pages(&extra, RANK_ROOM, sel, fast);
        }
    }
    rt_runs_free(&kept);
    rt_runs_free(&regions);
    rt_runs_free(&unseen);
    rt_runs_free(&extra);
    rt_runs_free(&out);
    rt_runs_free(&rest);
    rt_plan_runs_free(&sel_rest);
    return rc;
}

/* Predicted makespan if exactly the pages of fast were fast: the curves
 * and page accounting of the gain-versus-cost rule. */
static double makespan_of(task_pred *p, int n, const fast_set *fast)
{
    size_t total_pages = rt_objects_total_bytes() / RT_PAGE, nb;
    plan_ctx ctx = {p, n, 0};
    double ms = 0;
    for (int i = 0; i < n; i++) {
        double t = rt_time_cb(&ctx, i, share_of(&p[i], fast, total_pages, &nb));
        ms = t > ms ? t : ms;
    }
    return ms;
}

static double makespan_under_runs(task_pred *p, int n, const rt_runs *fast)
{
    fast_set f = {NULL, fast};
    return makespan_of(p, n, &f);
}

/* Hot-first on the same information as the plan: every sampled region by
 * its heat per page summed over the tasks, hottest first, up to the budget
 * (a page counted each time a region holds it), then the plan's keep rule
 * for the room left (pages already fast stay, in address order, those
 * never seen touched giving room to sampled pages that pay for it). If its
 * predicted makespan is below the plan's (fast, sel: the plan with its
 * fills) by more than the noise floor (PADDISER_MIN_GAIN, as in the
 * gain-versus-cost rule), it replaces them: a plan predicted slower than
 * hot-first is never applied. Built as ranked runs like the plan (its
 * page lists took 14 - 38 ms of a 40 - 60 ms replan at 512 MiB of fast
 * memory). covered: the placed pages objects cover, empty when the
 * placement is unknown (the plan keeps nothing then either). Returns 1 if
 * it replaced the plan, 0 if not, -1 out of memory. Not with THP kept
 * (hot-first has no whole-unit form here). */
static int hot_first_guard(task_pred *p, int n, benefit_regions *br, size_t budget_pages, const rt_runs *covered,
                           rt_plan_runs *sel, rt_runs *fast)
{
    rt.last_decision.model_s = makespan_under_runs(p, n, fast);
    rt.last_decision.hot_first_s = NAN;
    if (rt.thp == PD_THP_KEEP || !budget_pages)
        return 0;
    room_region *rr;
    size_t m;
    if (collect_regions(p, n, 0, &rr, &m) != 0)
        return -1;
    rt_plan_runs hsel = {0};
    rt_runs hf = {0};
    size_t pushed = 0;
    int rc = 0;
    for (size_t i = 0; i < m && pushed < budget_pages && rc == 0; i++) {
        size_t np = (region_end(rr[i].lo, rr[i].hi) - rr[i].lo) / RT_PAGE;
        size_t take = np < budget_pages - pushed ? np : budget_pages - pushed;
        rc = rt_plan_runs_push(&hsel, rr[i].lo, rr[i].lo + take * RT_PAGE, pushed);
        pushed += take;
    }
    free(rr);
    /* overlapping regions: each page once, at its hottest rank, in [0, 1):
     * before the kept pages */
    rt_plan_runs_seal(&hsel, 0, pushed);
    if (rc == 0 && (rt_plan_runs_unique(&hsel) != 0 || rt_plan_runs_pages(&hsel, &hf) != 0))
        rc = -1;
    if (rc == 0 && rt_runs_pages(&hf) < budget_pages)
        rc = keep_placed(covered, budget_pages - rt_runs_pages(&hf), &hsel, &hf);
    if (rc == 0 && !rt_env_off("PADDISER_DISPLACE_KEPT"))
        rc = displace_kept(br, &hsel, &hf);
    int won = 0;
    if (rc == 0) {
        rt.last_decision.hot_first_s = makespan_under_runs(p, n, &hf);
        /* by more than the noise floor: closer than that, the two are the
         * same prediction, and the plan (ranked per task) stays */
        won = rt.last_decision.hot_first_s < (1.0 - rt_min_gain_share()) * rt.last_decision.model_s;
    }
    if (won) {
        rt_plan_runs_free(sel);
        rt_runs_free(fast);
        *sel = hsel;
        *fast = hf;
        rt.last_decision.hot_first = 1;
        return 1;
    }
    rt_plan_runs_free(&hsel);
    rt_runs_free(&hf);
    return rc == 0 ? 0 : -1;
}

/* The trust in the tasks' predicted gain (rt_gain_trust): a learned m at
 * its fit's uncertainty, the prior at the prior's, a given m whole. NaN
 * out of memory. */
static double tasks_gain_trust(const task_pred *p, int n)
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

/* The gain-versus-cost rule's verdict: the gain beats the noise floor and,
 * over the horizon, the cost of the moves. */
static int rule_pays(double gain, double min_gain_s, int horizon, double cost_s)
{
    return gain > min_gain_s && gain * horizon > cost_s;
}

/* The gain-versus-cost rule: the plan (pages planned, sorted) is applied
 * only if its predicted makespan beats the current placement's (pages
 * placed, sorted) by more than the noise floor (PADDISER_MIN_GAIN of the
 * current makespan, default 2%) and by more, over the horizon, than moving
 * the `moves` pages costs; the gain counted at the share rt_gain_trust
 * gives (an m learned from few noisy instances promises less). Both makespans come from the same curves and the
 * same page accounting, so noise in the times scales both alike and a plan
 * that only reshuffles pages of about equal sampled heat (the churn of an
 * unchanged input) gains less than the floor. Returns 1 to keep the
 * placement; cur_* receive each task's share, fast bytes and predicted
 * time under it. */
static int keep_placement(task_pred *p, int n, const rt_runs *placed_now, const rt_runs *planned, size_t moves,
                          double *cur_share, size_t *cur_bytes, double *cur_time)
{
    rt_plan_decision d = {.decided = 1, .pages = moves, .horizon = rt_plan_horizon()};
    d.model_s = rt.last_decision.model_s; /* the hot-first guard's, before this rule */
    d.hot_first_s = rt.last_decision.hot_first_s;
    d.hot_first = rt.last_decision.hot_first;
    size_t total_pages = rt_objects_total_bytes() / RT_PAGE;
    plan_ctx ctx = {p, n, 0};
    for (int i = 0; i < n; i++) {
        size_t nb;
        double planned_t = rt_time_cb(&ctx, i, share_under_runs(&p[i], planned, total_pages, &nb));
        cur_share[i] = share_under_runs(&p[i], placed_now, total_pages, &cur_bytes[i]);
        cur_time[i] = rt_time_cb(&ctx, i, cur_share[i]);
        if (planned_t > d.planned_s)
            d.planned_s = planned_t;
        if (cur_time[i] > d.current_s)
            d.current_s = cur_time[i];
    }
    d.min_gain_s = rt_min_gain_share() * d.current_s;
    d.cost_s = (double)moves * rt_migrate_seconds_per_page();
    double trust = tasks_gain_trust(p, n);
    double gain = (d.current_s - d.planned_s) * (isnan(trust) ? 1.0 : trust);
    d.kept = !rule_pays(gain, d.min_gain_s, d.horizon, d.cost_s);
    rt.last_decision = d;
    return d.kept;
}

/* The last decision that moved nothing, so that a sync point whose inputs
 * did not change does not redo the page-level work (building, sorting and
 * comparing every planned page: 2 ms for 64 MiB of fast memory, 5% of a
 * 50 ms instance). Reused only while the objects, the heat
 * (rt.layout_gen), the placement (placed_gen) and the capacity are those
 * it judged, and then:
 * - a placement the gain-versus-cost rule kept stays while the rule,
 *   re-evaluated on the new predictions, the grown horizon and the trust
 *   of now, still keeps it for any plan within the planner's shift in
 *   bytes per task (its gain bounded from the planner's, its moves at
 *   most the shift fewer);
 * - a plan that was the placement stays while the planner's bytes per
 *   task moved by less than the noise floor's share of the fast memory.
 * Anything else decides afresh. */
typedef struct {
    int id;               /* the task */
    size_t bytes;         /* the planner's bytes it judged */
    double kshare;        /* the outputs: the share and bytes the task */
    size_t kbytes;        /* runs under when the placement was kept */
} memo_task;

static struct {
    int valid;
    unsigned epoch, layout_gen, placed_gen;
    size_t budget;
    int n;
    memo_task *task;
    int kept;          /* the tasks run under the kept placement */
    double plan_ms;    /* the planner's makespan it judged */
    rt_plan_decision d;
} memo;

static void memo_drop(void) { memo.valid = 0; }

static void memo_store(const task_pred *p, int n, const size_t *bytes, size_t budget, int kept, const double *kshare,
                       const size_t *kbytes)
{
    memo.valid = 0;
    memo_task *t = realloc(memo.task, (size_t)(n ? n : 1) * sizeof *t);
    if (!t)
        return; /* out of memory: the next sync point decides afresh */
    memo.task = t;
    for (int i = 0; i < n; i++)
        t[i] = (memo_task){p[i].task->id, bytes[i], kept ? kshare[i] : 0, kept ? kbytes[i] : 0};
    memo.n = n;
    memo.kept = kept;
    memo.budget = budget;
    memo.epoch = rt.epoch;
    memo.layout_gen = rt.layout_gen;
    memo.placed_gen = placed_gen;
    memo.plan_ms = rt.makespan;
    memo.d = rt.last_decision;
    memo.valid = 1;
}

/* 1 if the stored decision holds for this sync point (outputs filled as
 * rt_migrate's), 0 to decide afresh. */
static int memo_reuse(task_pred *p, int n, const size_t *bytes, size_t budget, int *kept, double *kshare,
                      size_t *kbytes, double *ktime)
{
    if (!memo.valid || memo.epoch != rt.epoch || memo.layout_gen != rt.layout_gen || memo.placed_gen != placed_gen ||
        placed.unknown || memo.budget != budget || memo.n != n || !budget)
        return 0;
    double floor = rt_min_gain_share();
    size_t shift = 0;
    for (int i = 0; i < n; i++) {
        const memo_task *m = &memo.task[i];
        if (m->id != p[i].task->id)
            return 0;
        shift += bytes[i] > m->bytes ? bytes[i] - m->bytes : m->bytes - bytes[i];
    }
    /* Without the rule's verdict (the plan was the placement), only the
     * same selection within the floor is the same decision. */
    int ruled = memo.kept && memo.d.decided;
    if (!ruled && (double)shift > floor * (double)budget)
        return 0;
    rt_plan_decision d = memo.d;
    /* the tasks run under the kept placement: its time under the new
     * predictions */
    plan_ctx ctx = {p, n, 0};
    double cur = 0;
    for (int i = 0; memo.kept && i < n; i++) {
        ktime[i] = rt_time_cb(&ctx, i, memo.task[i].kshare);
        cur = ktime[i] > cur ? ktime[i] : cur;
    }
    if (ruled) {
        /* the rule again on the new predictions, the gain grown by
         * whatever the planner now sees more of it (never shrunk: a reuse
         * errs towards deciding afresh) */
        double more = (cur - rt.makespan) - (memo.d.current_s - memo.plan_ms);
        double raw = memo.d.current_s - memo.d.planned_s + (more > 0 ? more : 0);
        double trust = tasks_gain_trust(p, n);
        if (isnan(trust))
            return 0;
        double gain = raw * trust;
        d.horizon = rt_plan_horizon();
        d.current_s = cur;
        d.min_gain_s = floor * cur;
        /* a plan whose bytes moved by `shift` from the judged one moves at
         * most that many pages fewer: its cost at least the rest */
        double fewer = (double)(shift / RT_PAGE), cost = 0;
        if ((double)d.pages > fewer)
            cost = d.cost_s * ((double)d.pages - fewer) / (double)d.pages;
        if (rule_pays(gain, d.min_gain_s, d.horizon, cost))
            return 0;
    }
    for (int i = 0; memo.kept && i < n; i++) {
        kshare[i] = memo.task[i].kshare;
        kbytes[i] = memo.task[i].kbytes;
    }
    d.reused = 1;
    rt.last_decision = d;
    memset(&rt.last_migration, 0, sizeof rt.last_migration);
    memset(&rt.last_demoted, 0, sizeof rt.last_demoted);
    *kept = memo.kept;
    return 1;
}

/* The plan's pages not placed yet (fresh: the plan less the placed pages)
 * into hot, hottest first: only these move in, usually few or none. Listed
 * only when the plan is applied: a kept placement moves nothing. */
static int rank_new_pages(const rt_plan_runs *fresh, page_list *hot)
{
    plan_list byrank = {0};
    int rc = PD_OK;
    for (size_t i = 0; i < fresh->n && rc == PD_OK; i++)
        for (uintptr_t pg = fresh->v[i].lo; pg < fresh->v[i].hi && rc == PD_OK; pg += RT_PAGE)
            if (plan_push(&byrank, pg, rt_plan_run_rank(&fresh->v[i], pg)) != 0)
                rc = PD_ENOMEM;
    if (byrank.n > 1)
        qsort(byrank.v, byrank.n, sizeof *byrank.v, cmp_plan_rank);
    for (size_t i = 0; i < byrank.n && rc == PD_OK; i++)
        if (page_push(hot, byrank.v[i].page) != 0)
            rc = PD_ENOMEM;
    free(byrank.v);
    return rc;
}

int rt_migrate(task_pred *p, int n, const size_t *bytes, int *kept, double *kept_share, size_t *kept_bytes,
               double *kept_time)
{
    *kept = 0;
    memset(&rt.last_decision, 0, sizeof rt.last_decision);
    rt.last_decision.model_s = rt.last_decision.hot_first_s = NAN;
    if (rt_migrate_adopt() != PD_OK)
        return PD_ENOMEM;
    /* What the plan may use of the fast memory: all of it alone, this
     * process's part of a plan across processes. */
    size_t budget = rt.capacity;
    if (rt.allgather) {
        budget = 0;
        for (int i = 0; i < n; i++)
            budget += bytes[i];
    }
    if (memo_reuse(p, n, bytes, budget, kept, kept_share, kept_bytes, kept_time))
        return PD_OK;
    memo_drop();
    /* The plan and the sets it is compared with, as runs of pages: a
     * replan's cost follows its regions and runs, not the fast memory's
     * size in pages (at 512 MiB fast, page lists were 25 - 38 ms of it);
     * only the pages that move are listed one by one. */
    rt_plan_runs sel = {0}, fresh = {0};
    rt_runs fast = {0}, before = {0}, cover = {0}, covered = {0}, stale_r = {0}, dropped_r = {0};
    page_list dropped = {0}, stale = {0}, hot = {0};
    benefit_regions br = {p, n, 0, NULL, 0};
    size_t budget_pages = budget / RT_PAGE;
    int rc = PD_OK;
    for (int i = 0; i < n && rc == PD_OK; i++)
        if (select_task_pages(&p[i], bytes[i], &sel) != 0)
            rc = PD_ENOMEM;
    /* tasks may share pages: each once, at its best rank */
    if (rc == PD_OK && (rt_plan_runs_unique(&sel) != 0 || rt_plan_runs_pages(&sel, &fast) != 0))
        rc = PD_ENOMEM;
    /* The difference: placed pages the plan drops (or no object covers any
     * more) go slow, planned pages not yet placed go fast, hottest first.
     * Placed pages no object covers any more (stale) leave in any case. */
    if (rc == PD_OK && (placed_runs(&before) != 0 || object_cover(&cover) != 0 ||
                        rt_runs_subtract(&before, &cover, &stale_r) != 0 ||
                        rt_runs_subtract(&before, &stale_r, &covered) != 0))
        rc = PD_ENOMEM;
    rt_runs_free(&cover);
    /* What the plan leaves of that budget keeps pages that are there
     * already, in address order: keeping costs no move, while sending
     * them out would leave the room empty (first-touch pages the sampler
     * did not see, a plan that fills less than the capacity). What is left
     * then goes to sampled pages whose benefit pays for their move. */
    if (rc == PD_OK && !placed.unknown && rt_runs_pages(&fast) < budget_pages &&
        keep_placed(&covered, budget_pages - rt_runs_pages(&fast), &sel, &fast) != 0)
        rc = PD_ENOMEM;
    if (rc == PD_OK && rt_runs_pages(&fast) < budget_pages &&
        (rt.thp == PD_THP_KEEP ? fill_room_by_units : fill_room_by_benefit)(
            &br, budget_pages - rt_runs_pages(&fast), &sel, &fast) != 0)
        rc = PD_ENOMEM;
    if (rc == PD_OK && rt.thp != PD_THP_KEEP && !rt_env_off("PADDISER_DISPLACE_KEPT") &&
        displace_kept(&br, &sel, &fast) != 0)
        rc = PD_ENOMEM;
    int hot_first = 0;
    rt_runs none = {0}; /* hot-first keeps nothing either when the placement is unknown */
    if (rc == PD_OK && (hot_first = hot_first_guard(p, n, &br, budget_pages, placed.unknown ? &none : &covered, &sel,
                                                    &fast)) < 0)
        rc = PD_ENOMEM;
    /* The plan's pages not placed yet (all of them when the placement is
     * unknown) and the placed ones it drops: counted for the rule, listed
     * only where they move (rank_new_pages, and the dropped pages' list
     * when the plan is applied). */
    if (rc == PD_OK && (rt_runs_subtract(&covered, &fast, &dropped_r) != 0 ||
                        rt_plan_runs_subtract(&sel, placed.unknown ? &none : &before, &fresh) != 0 ||
                        runs_to_pages(&stale_r, &stale) != 0))
        rc = PD_ENOMEM;
    size_t nnew = rt_plan_runs_npages(&fresh);
    size_t ndropped = rt_runs_pages(&dropped_r);
    /* A placement holding more fast memory than the plan may use (first
     * touch beyond the capacity, or beyond this process's part of a plan
     * across processes: the others count on the rest) is never kept. */
    int over = rt_runs_pages(&covered) * RT_PAGE > budget;
    if (rc == PD_OK && !placed.unknown && !over && (nnew || ndropped) &&
        keep_placement(p, n, &covered, &fast, nnew + ndropped, kept_share, kept_bytes, kept_time)) {
        /* The placement stays; only what no object covers any more leaves. */
        pd_migrate_stats ignored = {0};
        move_chunked(&stale, PD_TIER_SLOW, &ignored, NULL);
        if (stale.n && placed_set_runs(&covered) != 0) {
            rc = PD_ENOMEM;
            rt_migrate_reset();
            placed.unknown = 1;
        }
        memset(&rt.last_migration, 0, sizeof rt.last_migration);
        memset(&rt.last_demoted, 0, sizeof rt.last_demoted);
        rt.fast_bytes = placed_bytes();
        *kept = 1;
        if (!stale.n && rc == PD_OK)
            memo_store(p, n, bytes, budget, 1, kept_share, kept_bytes);
    } else if (rc == PD_OK && (rc = rank_new_pages(&fresh, &hot)) == PD_OK &&
               (rc = runs_to_pages(&dropped_r, &dropped) == 0 ? PD_OK : PD_ENOMEM) == PD_OK) {
        pd_migrate_stats total = {0}, promoted = {0}, demoted = {0}, ignored = {0};
        /* stale pages: failures not counted, the memory may be gone */
        move_chunked(&stale, PD_TIER_SLOW, &ignored, NULL);
        double t0 = pd_monotonic();
        move_chunked(&dropped, PD_TIER_SLOW, &total, NULL); /* out first: frees room */
        if (promote_plan(&sel, &hot, &dropped, &promoted, &demoted) != 0)
            rc = PD_ENOMEM;
        pd_migrate_stats_add(&total, &promoted);
        if (total.bytes_moved)
            rt_migrate_cost_record(total.pages_moved, pd_monotonic() - t0);
        page_list real = {0}; /* what is fast now, where it was read back */
        if (rc == PD_OK) {
            /* Without failures the plan is what is placed; otherwise ask. */
            int exact = total.pages_failed == 0 && demoted.pages_moved == 0;
            if (exact ? placed_set_runs(&fast) != 0 : confirm_placed(&before, &fast, &real) != 0)
                rc = PD_ENOMEM;
        }
        if (rc != PD_OK) {
            /* Pages may have moved before the allocation failed: the kept
             * set no longer says which are fast, so the next sync point
             * submits every page rather than trusting it. */
            rt_migrate_reset();
            placed.unknown = 1;
        }
        rt.last_migration = total;
        rt.last_demoted = demoted;
        rt.fast_bytes = placed_bytes();
        /* What each task runs under: the planner's share, unless what was
         * placed gives it another. Hot-first's set is not the planner's
         * plan; and a task with nothing sampled has no pages of its own to
         * move, so its plan's bytes are never placed and it runs at the
         * fast share of all registered pages (with sampling off, a plan's
         * share taken as run made the next predictions expect a speed-up
         * that never came: 5.4% error against the naive 1.2% on the phases
         * example). */
        /* Pages the backend refused (a full fast tier): the tasks run under
         * what is placed now (confirm_placed read it back), not under the
         * plan, whose predictions would expect a speed-up that never came
         * (GAP's PageRank under `paddiser run`, the fast tier full: 0.07 s
         * predicted and 0.16 s measured, instance after instance). */
        int refused = rc == PD_OK && total.pages_failed > 0;
        int differs = hot_first == 1 || refused, unsampled = 0;
        for (int i = 0; i < n; i++)
            unsampled |= p[i].task->nhot == 0;
        if (differs || unsampled) {
            size_t total_pages = rt_objects_total_bytes() / RT_PAGE;
            plan_ctx ctx = {p, n, 0};
            for (int i = 0; i < n; i++) {
                kept_share[i] = refused ? share_under(&p[i], &real, total_pages, &kept_bytes[i])
                                        : share_under_runs(&p[i], &fast, total_pages, &kept_bytes[i]);
                kept_time[i] = rt_time_cb(&ctx, i, kept_share[i]);
                differs |= p[i].task->nhot == 0 && fabs(kept_share[i] - p[i].task->plan_share) > 1e-3;
            }
        }
        free(real.v);
        if (differs)
            *kept = 1;
        if (rc == PD_OK && !stale.n && !hot.n && !dropped.n && !placed.unknown)
            memo_store(p, n, bytes, budget, *kept, kept_share, kept_bytes); /* the plan is the placement */
        if (total.pages_failed)
            rt_message("migration: %zu of %zu pages not moved (enomem %zu, ebusy %zu, efault %zu, other %zu), "
                       "%zu demoted to make room",
                       total.pages_failed, total.pages_requested, total.enomem, total.ebusy, total.efault,
                       total.other_errors, demoted.pages_moved);
    }
    rt_plan_runs_free(&sel);
    rt_runs_free(&fast);
    rt_runs_free(&before);
    rt_runs_free(&covered);
    rt_runs_free(&stale_r);
    rt_runs_free(&dropped_r);
    rt_plan_runs_free(&fresh);
    free(dropped.v);
    free(stale.v);
    free(hot.v);
    free(br.v);
    return rc;
}

size_t rt_plan_capacity(void)
{
    size_t total = rt_objects_total_bytes();
    size_t cap;
    if (rt.opt.fast_capacity)
        cap = rt.opt.fast_capacity;
    else if (rt.backend)
        cap = rt.backend->fast_free(rt.backend) + rt.fast_bytes;
    else
        cap = total;
    return cap < total ? cap : total;
}
