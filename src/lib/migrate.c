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
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/addr_sort.h"
#include "lib/page_runs.h"
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

static int cmp_page(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
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

/* Whether a sorted page list holds pages asked about mostly in ascending
 * order (a region's pages, an address-ordered list): each question moves
 * the cursor forward, so n questions cost O(n + the list's length from the
 * start) instead of n binary searches, which were most of a sync point
 * after an input change. A question below the last one searches again
 * (the unknown placement lists objects in registration order). */
typedef struct {
    const page_list *l;
    size_t i;
    uintptr_t last;
} page_cursor;

static page_cursor cursor_at(const page_list *l, uintptr_t from)
{
    return (page_cursor){l, lower_bound(l, from), from};
}

static int cursor_has(page_cursor *c, uintptr_t p)
{
    if (p < c->last)
        c->i = lower_bound(c->l, p);
    c->last = p;
    while (c->i < c->l->n && (uintptr_t)c->l->v[c->i] < p)
        c->i++;
    return c->i < c->l->n && (uintptr_t)c->l->v[c->i] == p;
}

/* Sorts a page list and drops its duplicates. */
static void sort_unique(page_list *l)
{
    rt_sort_by_address(l->v, l->n, sizeof *l->v, cmp_page);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (k == 0 || l->v[k - 1] != l->v[i])
            l->v[k++] = l->v[i];
    l->n = k;
}

/* fast := fast (sorted) merged with extra (sorted, none of them in fast):
 * one linear pass instead of sorting the whole again. */
static int merge_sorted(page_list *fast, const page_list *extra)
{
    if (!extra->n)
        return 0;
    size_t n = fast->n + extra->n;
    void **v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    size_t i = 0, j = 0, k = 0;
    while (i < fast->n || j < extra->n)
        v[k++] = j == extra->n || (i < fast->n && (uintptr_t)fast->v[i] < (uintptr_t)extra->v[j]) ? fast->v[i++]
                                                                                                   : extra->v[j++];
    free(fast->v);
    fast->v = v;
    fast->n = fast->cap = n;
    return 0;
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
 * coldest): the promotion order across tasks. */
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

static int plan_push(plan_list *l, uintptr_t p)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 1024;
        plan_page *np = realloc(l->v, ncap * sizeof *np);
        if (!np)
            return -1;
        l->v = np;
        l->cap = ncap;
    }
    l->v[l->n++] = (plan_page){p, 0};
    return 0;
}

/* Pages [lo, hi) of a region, or with THP kept the whole 2 MB units it
 * touches (within the object's pages), while the budget lasts: a unit is
 * taken only whole, so a task's fast bytes stay within its plan. units
 * holds this task's units so far (a region may share one with another). */
static int push_region(plan_list *out, const rt_object *o, uintptr_t lo, uintptr_t hi, size_t budget, size_t *used,
                       page_list *units)
{
    if (rt.thp != PD_THP_KEEP) {
        for (uintptr_t p = lo & ~(uintptr_t)(RT_PAGE - 1); p < hi && *used < budget; p += RT_PAGE) {
            if (plan_push(out, p) != 0)
                return -1;
            *used += RT_PAGE;
        }
        return 0;
    }
    uintptr_t olo = (uintptr_t)o->addr & ~(uintptr_t)(RT_PAGE - 1), ohi = (uintptr_t)o->addr + o->size;
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
        for (uintptr_t p = u < olo ? olo : u; p < u + RT_THP_UNIT && p < ohi; p += RT_PAGE)
            if (plan_push(out, p) != 0)
                return -1;
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
 * its bytes curve) up to its planned bytes, hottest first, each with its
 * rank in the task's plan. page_select's pd_select_plan wants one count per
 * page; a region's pages share one sample, so the walk is per region here,
 * O(samples) instead of O(pages). */
static int select_task_pages(const task_pred *tp, size_t budget, plan_list *out)
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
    size_t used = 0, first = out->n;
    page_list units = {0};
    int rc = 0;
    for (size_t j = 0; j < t->nhot && used < budget && rc == 0; j++) {
        const rt_hot *h = &t->hot[order[j]];
        const rt_object *o = &rt.objects[h->object];
        if (!o->used || rt_hot_weight(tp, h) <= 0)
            continue;
        uintptr_t lo, hi;
        region_bounds(o, h, &lo, &hi);
        rc = push_region(out, o, lo, hi, budget, &used, &units);
    }
    for (size_t k = first; k < out->n; k++)
        out->v[k].rank = ((double)(k - first) + 0.5) / (double)(out->n - first);
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

/* Pages of the regions rr[0..m), in their order, that are not in `skip`
 * (sorted, may be empty) and have value above `floor`, until `room` pages:
 * sorted and unique in *extra. */
static int take_regions(const room_region *rr, size_t m, double floor, const page_list *skip, size_t room,
                        page_list *extra)
{
    int rc = 0;
    for (size_t i = 0; i < m && room && rc == 0 && rr[i].benefit > floor; i++) {
        page_cursor in_skip = cursor_at(skip, rr[i].lo);
        for (uintptr_t pg = rr[i].lo; pg < rr[i].hi && room && rc == 0; pg += RT_PAGE) {
            if (cursor_has(&in_skip, pg))
                continue;
            rc = page_push(extra, pg);
            room -= rc == 0;
        }
    }
    if (rc == 0) /* regions of different objects' strata can overlap at a page: once */
        sort_unique(extra);
    return rc;
}

/* The pages a room fill chose (sorted, none in fast) join the selection,
 * ranked after the plans' own pages, and fast (kept sorted). */
static int add_room_pages(const page_list *extra, plan_list *sel, page_list *fast)
{
    for (size_t i = 0; i < extra->n; i++) {
        if (plan_push(sel, (uintptr_t)extra->v[i]) != 0)
            return -1;
        sel->v[sel->n - 1].rank = RANK_ROOM;
    }
    return merge_sorted(fast, extra);
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
static int fill_room_by_benefit(benefit_regions *br, size_t room, plan_list *sel, page_list *fast)
{
    if (!room)
        return 0;
    if (benefit_regions_get(br) != 0)
        return -1;
    double move = rt_migrate_seconds_per_page() / (double)rt_plan_horizon(); /* per instance */
    page_list extra = {0};
    int rc = take_regions(br->v, br->m, move, fast, room, &extra);
    if (rc == 0)
        rc = add_room_pages(&extra, sel, fast);
    free(extra.v);
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
static int fill_room_by_units(benefit_regions *br, size_t room, plan_list *sel, page_list *fast)
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
        for (size_t i = 0; i < k; i++) {
            page_cursor in_fast = cursor_at(fast, u[i].unit);
            for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT; pg += RT_PAGE)
                u[i].cost += covered_by_object(pg) && !cursor_has(&in_fast, pg);
        }
        size_t j = 0;
        for (size_t i = 0; i < k; i++)
            if (u[i].cost)
                u[j++] = u[i];
        k = j;
        if (k)
            qsort(u, k, sizeof *u, cmp_unit_value);
    }
    double move = rt_migrate_seconds_per_page() / (double)rt_plan_horizon(); /* per instance */
    page_list extra = {0};
    for (size_t i = 0; i < k && rc == 0; i++) {
        if (u[i].cost > room || !(u[i].benefit / (double)u[i].cost > move))
            continue;
        room -= u[i].cost;
        page_cursor in_fast = cursor_at(fast, u[i].unit);
        for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT && rc == 0; pg += RT_PAGE)
            if (covered_by_object(pg) && !cursor_has(&in_fast, pg))
                rc = page_push(&extra, pg);
    }
    free(u);
    if (rc == 0)
        sort_unique(&extra);
    if (rc == 0)
        rc = add_room_pages(&extra, sel, fast);
    free(extra.v);
    return rc;
}

static int cmp_plan_page(const void *a, const void *b)
{
    const plan_page *x = a, *y = b;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_plan_rank(const void *a, const void *b)
{
    const plan_page *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->page < y->page ? -1 : x->page > y->page;
}

static void move_chunked(page_list *l, int tier, pd_migrate_stats *total, size_t *ok_pages)
{
    const size_t chunk = 4096;
    for (size_t i = 0; i < l->n; i += chunk) {
        size_t n = l->n - i < chunk ? l->n - i : chunk;
        pd_migrate_stats st = {0};
        rt.backend->move(rt.backend, l->v + i, n, tier, &st);
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

static int placed_has(uintptr_t pg)
{
    if (placed.unknown)
        return 0;
    size_t lo = 0, hi = placed.n; /* first run starting after pg */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (placed.start[mid] <= pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && pg < placed.start[lo - 1] + placed.npages[lo - 1] * RT_PAGE;
}

/* Every page of the placed set, in address order, into out; when the set
 * is unknown, every registered page. */
static int placed_pages(page_list *out)
{
    if (placed.unknown) {
        for (size_t o = 0; o < rt.nobjects; o++) {
            const rt_object *ob = &rt.objects[o];
            if (!ob->used)
                continue;
            for (uintptr_t pg = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1); pg < (uintptr_t)ob->addr + ob->size;
                 pg += RT_PAGE)
                if (page_push(out, pg) != 0)
                    return -1;
        }
        return 0;
    }
    for (size_t r = 0; r < placed.n; r++)
        for (size_t k = 0; k < placed.npages[r]; k++)
            if (page_push(out, placed.start[r] + k * RT_PAGE) != 0)
                return -1;
    return 0;
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

/* placed := the pages of a list in any order, duplicates allowed. */
static int placed_set_unsorted(page_list *l)
{
    sort_unique(l);
    return placed_set(l);
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
        ob->adopt = 0;
        uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1), hi = (uintptr_t)ob->addr + ob->size;
        size_t len = (size_t)((hi - lo + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1));
        pd_migrate_stats st = {0};
        rt.backend->place(rt.backend, (void *)lo, len, PD_PLACE_FIRST_TOUCH, &st);
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
    if (rc == 0)
        rt.backend->promote(rt.backend, pages, n, cold.v, cold.n, st, demoted);
    free(cold.v);
    return rc;
}

/* The plan's new pages (not yet placed) to the fast tier. Where some do not
 * fit (the node or the budget is short), the whole plan once more in rank
 * order, so that the backend can trade a placed but colder planned page for
 * a hotter new one: the rare case pays for the whole plan, the common one
 * only for what changed. */
static int promote_plan(const plan_list *sel, const page_list *hot_new, const page_list *dropped,
                        pd_migrate_stats *st, pd_migrate_stats *demoted)
{
    pd_migrate_stats first = {0};
    if (promote_pages(hot_new->v, hot_new->n, dropped, &first, demoted) != 0)
        return -1;
    if (!first.pages_failed) {
        *st = first;
        return 0;
    }
    /* the whole plan in rank order: a copy, sel is in page order */
    plan_page *byrank = malloc((sel->n ? sel->n : 1) * sizeof *byrank);
    if (!byrank)
        return -1;
    memcpy(byrank, sel->v, sel->n * sizeof *byrank);
    qsort(byrank, sel->n, sizeof *byrank, cmp_plan_rank);
    page_list all = {0};
    int rc = 0;
    for (size_t i = 0; i < sel->n && rc == 0; i++)
        rc = page_push(&all, byrank[i].page);
    free(byrank);
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
static int confirm_placed(const page_list *before, const page_list *fast, page_list *placed_now)
{
    page_list all = {0};
    int rc = 0;
    for (size_t i = 0; i < before->n && rc == 0; i++)
        rc = page_push(&all, (uintptr_t)before->v[i]);
    for (size_t i = 0; i < fast->n && rc == 0; i++)
        rc = page_push(&all, (uintptr_t)fast->v[i]);
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
    rc = placed_set_unsorted(&all); /* sorts all in place */
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

/* Sorts a selection by page and keeps each page once, at its best rank. */
static void plan_unique(plan_list *sel)
{
    rt_sort_by_address(sel->v, sel->n, sizeof *sel->v, cmp_plan_page);
    size_t k = 0;
    for (size_t i = 0; i < sel->n; i++) {
        if (k == 0 || sel->v[k - 1].page != sel->v[i].page)
            sel->v[k++] = sel->v[i];
        else if (sel->v[i].rank < sel->v[k - 1].rank)
            sel->v[k - 1].rank = sel->v[i].rank;
    }
    sel->n = k;
}

/* The keep rule: up to `room` pages already fast (covered, in address
 * order) that fast (sorted) does not hold join it, ranked after every
 * planned page: keeping them costs no move. 0 or -1 (out of memory). */
static int keep_placed(const page_list *covered, size_t room, plan_list *sel, page_list *fast)
{
    page_list keep = {0};
    int rc = 0;
    page_cursor in_fast = cursor_at(fast, 0);
    for (size_t i = 0; i < covered->n && room && rc == 0; i++) {
        uintptr_t pg = (uintptr_t)covered->v[i];
        if (cursor_has(&in_fast, pg))
            continue;
        if ((rc = plan_push(sel, pg)) == 0 && (rc = page_push(&keep, pg)) == 0)
            sel->v[sel->n - 1].rank = RANK_KEPT;
        room--;
    }
    if (rc == 0)
        rc = merge_sorted(fast, &keep); /* covered is in address order */
    free(keep.v);
    return rc;
}

static double tasks_gain_trust(const task_pred *p, int n);

/* A page keep_placed kept and what it is worth an instance on the fast
 * tier (the best sampled region holding it; 0 if none does). */
typedef struct {
    uintptr_t page;
    double benefit;
} kept_page;

static int cmp_kept_benefit(const void *a, const void *b)
{
    const kept_page *x = a, *y = b;
    if (x->benefit != y->benefit)
        return x->benefit < y->benefit ? -1 : 1;
    return x->page < y->page ? -1 : x->page > y->page;
}

/* fast (sorted) without the pages of out (sorted), and sel without their
 * kept entries. */
static void drop_kept(const page_list *out, plan_list *sel, page_list *fast)
{
    size_t k = 0, j = 0;
    for (size_t i = 0; i < fast->n; i++) {
        uintptr_t pg = (uintptr_t)fast->v[i];
        while (j < out->n && (uintptr_t)out->v[j] < pg)
            j++;
        if (!(j < out->n && (uintptr_t)out->v[j] == pg))
            fast->v[k++] = fast->v[i];
    }
    fast->n = k;
    k = 0;
    for (size_t i = 0; i < sel->n; i++) {
        size_t at = lower_bound(out, sel->v[i].page);
        if (!(sel->v[i].rank == RANK_KEPT && at < out->n && (uintptr_t)out->v[at] == sel->v[i].page))
            sel->v[k++] = sel->v[i];
    }
    sel->n = k;
}

/* The pages keep_placed kept hold room for free, but they may be cold
 * (first touch put them there, not the heat): at a small capacity the room
 * they hold is much of the budget (spgemm at 10 %: 25 - 40 % of it, and the
 * study's runtime then scored 8 - 10 ms against hot-first's 5.8; docs/sim.md).
 * A kept page that no sampled touch was seen on gives its room to a
 * sampled page not yet fast whose benefit, at the rule's trust, beats it by
 * more than both moves cost over the horizon (the promotion and the kept
 * page's demotion), the most beneficial first. Kept pages with sampled
 * touches stay: where the sampler under-weights a page (bfs's `level`),
 * displacing them by benefit cost the study 2 - 4 % at 50 - 70 % capacity.
 * Runs after the keeping and the room fill, so room nobody holds is still
 * filled first. */
static int displace_kept(benefit_regions *br, plan_list *sel, page_list *fast)
{
    size_t nk = 0;
    for (size_t i = 0; i < sel->n; i++)
        nk += sel->v[i].rank == RANK_KEPT;
    if (!nk)
        return 0;
    kept_page *kp = malloc(nk * sizeof *kp);
    page_list kept = {0}, extra = {0}, out = {0};
    int rc = kp && benefit_regions_get(br) == 0 ? 0 : -1;
    const room_region *rr = br->v;
    size_t m = br->m;
    for (size_t i = 0; i < sel->n && rc == 0; i++)
        if (sel->v[i].rank == RANK_KEPT)
            rc = page_push(&kept, sel->v[i].page);
    if (rc == 0 && m) {
        sort_unique(&kept);
        nk = kept.n;
        for (size_t i = 0; i < nk; i++)
            kp[i] = (kept_page){(uintptr_t)kept.v[i], NAN};
        for (size_t i = 0; i < m; i++) /* rr is by benefit, highest first: the best region holding it */
            for (size_t at = lower_bound(&kept, rr[i].lo); at < nk && kp[at].page < rr[i].hi; at++)
                if (isnan(kp[at].benefit))
                    kp[at].benefit = rr[i].benefit;
        for (size_t i = 0; i < nk; i++)
            if (isnan(kp[i].benefit))
                kp[i].benefit = 0;
        qsort(kp, nk, sizeof *kp, cmp_kept_benefit);
        /* per instance, in benefit as the rule counts it (at its trust) */
        double trust = tasks_gain_trust(br->p, br->n);
        double both = 2.0 * rt_migrate_seconds_per_page() / (double)rt_plan_horizon() /
                      (isnan(trust) ? 1.0 : fmax(trust, 1e-6));
        size_t j = 0;
        while (nk > 0 && kp[nk - 1].benefit > 0) /* only pages no sampled touch is known of */
            nk--;
        for (size_t i = 0; i < m && j < nk && rc == 0 && rr[i].benefit - kp[j].benefit > both; i++) {
            page_cursor in_fast = cursor_at(fast, rr[i].lo);
            for (uintptr_t pg = rr[i].lo; pg < rr[i].hi && j < nk && rc == 0; pg += RT_PAGE) {
                if (rr[i].benefit - kp[j].benefit <= both)
                    break;
                if (cursor_has(&in_fast, pg))
                    continue;
                if ((rc = page_push(&extra, pg)) == 0)
                    rc = page_push(&out, kp[j++].page);
            }
        }
    }
    if (rc == 0 && extra.n) {
        sort_unique(&extra); /* regions of different objects' strata can overlap at a page */
        sort_unique(&out);
        drop_kept(&out, sel, fast);
        rc = add_room_pages(&extra, sel, fast);
    }
    free(kp);
    free(kept.v);
    free(extra.v);
    free(out.v);
    return rc;
}

/* Predicted makespan if exactly the pages of fast (sorted) were fast: the
 * curves and page accounting of the gain-versus-cost rule. */
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

static double makespan_under(task_pred *p, int n, const page_list *fast)
{
    fast_set f = {fast, NULL};
    return makespan_of(p, n, &f);
}

/* makespan_under for a set of pages kept as runs: the same sums in the
 * same order (share_of), so the same value to the bit. */
static double makespan_under_runs(task_pred *p, int n, const rt_runs *fast)
{
    fast_set f = {NULL, fast};
    return makespan_of(p, n, &f);
}

/* A region's pages as hot_first_guard's page walks take them: from lo
 * (page-aligned) while below hi. */
static uintptr_t region_end(uintptr_t lo, uintptr_t hi) { return lo + (hi - lo + RT_PAGE - 1) / RT_PAGE * RT_PAGE; }

/* Hot-first's predicted makespan as hot_first_guard's page lists give it
 * (the same selection, keeping and displacement, step by step), on sets
 * of runs: at a replan with 512 MiB of fast memory the lists took 14 -
 * 38 ms of a 40 - 60 ms sync point, most of it for a set that then lost.
 * covered must be in address order (the placement known). NaN out of
 * memory. */
static double hot_first_runs(task_pred *p, int n, benefit_regions *br, size_t budget_pages, const page_list *covered)
{
    room_region *rr;
    size_t m;
    if (collect_regions(p, n, 0, &rr, &m) != 0)
        return NAN;
    rt_runs hot = {0}, kept = {0}, both_sets = {0}, regions = {0}, unseen = {0}, out = {0}, rest = {0};
    int rc = 0;
    /* the regions by heat, a page counted each time a region holds it, up
     * to the budget */
    size_t pushed = 0;
    for (size_t i = 0; i < m && pushed < budget_pages && rc == 0; i++) {
        size_t np = (region_end(rr[i].lo, rr[i].hi) - rr[i].lo) / RT_PAGE;
        size_t take = np < budget_pages - pushed ? np : budget_pages - pushed;
        rc = rt_runs_add(&hot, rr[i].lo, rr[i].lo + take * RT_PAGE);
        pushed += take;
    }
    free(rr);
    if (rc == 0)
        rc = rt_runs_normalize(&hot);
    /* keep_placed: placed pages not in it, in address order, up to the room */
    size_t nhot = rt_runs_pages(&hot);
    if (rc == 0 && nhot < budget_pages) {
        size_t room = budget_pages - nhot;
        rt_runs_cursor in_hot = rt_runs_cursor_at(&hot);
        for (size_t i = 0; i < covered->n && room && rc == 0; i++) {
            uintptr_t pg = (uintptr_t)covered->v[i];
            if (rt_runs_cursor_has(&in_hot, pg))
                continue;
            rc = rt_runs_add(&kept, pg, pg + RT_PAGE);
            room--;
        }
    }
    if (rc == 0)
        rc = rt_runs_normalize(&kept);
    for (size_t i = 0; i < hot.n && rc == 0; i++)
        rc = rt_runs_add(&both_sets, hot.v[i].lo, hot.v[i].hi);
    for (size_t i = 0; i < kept.n && rc == 0; i++)
        rc = rt_runs_add(&both_sets, kept.v[i].lo, kept.v[i].hi);
    if (rc == 0)
        rc = rt_runs_normalize(&both_sets);
    const rt_runs *fast = &both_sets;
    /* displace_kept: kept pages no sampled region holds give their room,
     * in address order, to the pages not yet in the set of the regions by
     * benefit whose benefit beats both moves */
    if (rc == 0 && rt_runs_pages(&kept) && !rt_env_off("PADDISER_DISPLACE_KEPT")) {
        rc = benefit_regions_get(br);
        const room_region *bv = br->v;
        size_t bm = br->m;
        for (size_t i = 0; i < bm && rc == 0; i++)
            rc = rt_runs_add(&regions, bv[i].lo, region_end(bv[i].lo, bv[i].hi));
        if (rc == 0)
            rc = rt_runs_normalize(&regions);
        if (rc == 0)
            rc = rt_runs_subtract(&kept, &regions, &unseen);
        size_t nz = rt_runs_pages(&unseen), j = 0;
        if (rc == 0 && bm && nz) {
            double trust = tasks_gain_trust(br->p, br->n);
            double both = 2.0 * rt_migrate_seconds_per_page() / (double)rt_plan_horizon() /
                          (isnan(trust) ? 1.0 : fmax(trust, 1e-6));
            rt_runs extra = {0};
            for (size_t i = 0; i < bm && j < nz && rc == 0 && bv[i].benefit - 0.0 > both; i++) {
                uintptr_t at = bv[i].lo, end = region_end(bv[i].lo, bv[i].hi);
                for (size_t r = rt_runs_after(&both_sets, at); at < end && j < nz && rc == 0; r++) {
                    uintptr_t gap = r < both_sets.n && both_sets.v[r].lo < end ? both_sets.v[r].lo : end;
                    if (gap > at) {
                        size_t t = (gap - at) / RT_PAGE < nz - j ? (gap - at) / RT_PAGE : nz - j;
                        rc = rt_runs_add(&extra, at, at + t * RT_PAGE);
                        j += t;
                    }
                    if (r >= both_sets.n || both_sets.v[r].lo >= end)
                        break;
                    at = both_sets.v[r].hi > at ? both_sets.v[r].hi : at;
                }
            }
            /* the first j unseen pages leave; the extra pages join */
            for (size_t i = 0, left = j; i < unseen.n && left && rc == 0; i++) {
                size_t np = (unseen.v[i].hi - unseen.v[i].lo) / RT_PAGE, t = np < left ? np : left;
                rc = rt_runs_add(&out, unseen.v[i].lo, unseen.v[i].lo + t * RT_PAGE);
                left -= t;
            }
            if (rc == 0)
                rc = rt_runs_normalize(&out);
            if (rc == 0)
                rc = rt_runs_subtract(&both_sets, &out, &rest);
            for (size_t i = 0; i < extra.n && rc == 0; i++)
                rc = rt_runs_add(&rest, extra.v[i].lo, extra.v[i].hi);
            if (rc == 0)
                rc = rt_runs_normalize(&rest);
            rt_runs_free(&extra);
            if (j)
                fast = &rest;
        }
    }
    double ms = rc == 0 ? makespan_under_runs(p, n, fast) : NAN;
    rt_runs_free(&hot);
    rt_runs_free(&kept);
    rt_runs_free(&both_sets);
    rt_runs_free(&regions);
    rt_runs_free(&unseen);
    rt_runs_free(&out);
    rt_runs_free(&rest);
    return ms;
}

/* Hot-first on the same information as the plan: every sampled region by
 * its heat per page summed over the tasks, hottest first, up to the budget,
 * then the plan's keep rule for the room left (pages already fast stay, in
 * address order, those never seen touched giving room to sampled pages
 * that pay for it). If its predicted makespan is below the plan's (fast, sel:
 * the plan with its fills) by more than the noise floor (PADDISER_MIN_GAIN,
 * as in the gain-versus-cost rule), it replaces them: a plan predicted
 * slower than hot-first is never applied. Returns 1 if it did, 0 if not, -1 out of
 * memory. Not with THP kept (hot-first has no whole-unit form here). */
static int hot_first_guard(task_pred *p, int n, benefit_regions *br, size_t budget_pages, const page_list *covered,
                           plan_list *sel, page_list *fast)
{
    rt.last_decision.model_s = makespan_under(p, n, fast);
    rt.last_decision.hot_first_s = NAN;
    if (rt.thp == PD_THP_KEEP || !budget_pages)
        return 0;
    /* Hot-first's prediction from runs; its page lists only where it wins
     * (PADDISER_GUARD_SELFCHECK=1, for tests: always, and both must agree). */
    double by_runs = placed.unknown ? NAN : hot_first_runs(p, n, br, budget_pages, covered);
    int selfcheck = rt_env_on("PADDISER_GUARD_SELFCHECK");
    if (!isnan(by_runs) && !selfcheck && !(by_runs < (1.0 - rt_min_gain_share()) * rt.last_decision.model_s)) {
        rt.last_decision.hot_first_s = by_runs;
        return 0;
    }
    room_region *rr;
    size_t m;
    if (collect_regions(p, n, 0, &rr, &m) != 0)
        return -1;
    plan_list hsel = {0};
    page_list hf = {0};
    int rc = 0;
    for (size_t i = 0; i < m && hsel.n < budget_pages && rc == 0; i++)
        for (uintptr_t pg = rr[i].lo; pg < rr[i].hi && hsel.n < budget_pages && rc == 0; pg += RT_PAGE)
            if ((rc = plan_push(&hsel, pg)) == 0)
                hsel.v[hsel.n - 1].rank = (double)hsel.n;
    free(rr);
    /* overlapping regions: each page once, at its hottest rank, in [0, 1):
     * before the kept pages */
    for (size_t i = 0; i < hsel.n; i++)
        hsel.v[i].rank = (hsel.v[i].rank - 0.5) / (double)hsel.n;
    if (rc == 0)
        plan_unique(&hsel);
    for (size_t i = 0; i < hsel.n && rc == 0; i++)
        rc = page_push(&hf, hsel.v[i].page); /* hsel is in page order */
    if (rc == 0 && hf.n < budget_pages)
        rc = keep_placed(covered, budget_pages - hf.n, &hsel, &hf);
    if (rc == 0 && !rt_env_off("PADDISER_DISPLACE_KEPT"))
        rc = displace_kept(br, &hsel, &hf);
    int won = 0;
    if (rc == 0) {
        rt.last_decision.hot_first_s = makespan_under(p, n, &hf);
        if (selfcheck && !isnan(by_runs) && by_runs != rt.last_decision.hot_first_s) {
            rt_message("hot-first guard: %.17g s from runs, %.17g s from pages", by_runs,
                       rt.last_decision.hot_first_s);
            abort();
        }
        /* by more than the noise floor: closer than that, the two are the
         * same prediction, and the plan (ranked per task) stays */
        won = rt.last_decision.hot_first_s < (1.0 - rt_min_gain_share()) * rt.last_decision.model_s;
    }
    if (won) {
        rt_sort_by_address(hsel.v, hsel.n, sizeof *hsel.v, cmp_plan_page);
        free(sel->v);
        free(fast->v);
        *sel = hsel;
        *fast = hf;
        rt.last_decision.hot_first = 1;
        return 1;
    }
    free(hsel.v);
    free(hf.v);
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
static int keep_placement(task_pred *p, int n, const page_list *placed_now, const page_list *planned, size_t moves,
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
        double planned_t = rt_time_cb(&ctx, i, share_under(&p[i], planned, total_pages, &nb));
        cur_share[i] = share_under(&p[i], placed_now, total_pages, &cur_bytes[i]);
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

/* The plan's pages not placed yet into hot, hottest first: only these move
 * in, usually few or none. Sorted only when the plan is applied: a kept
 * placement moves nothing (on the phases example's first plan, 11k pages
 * ranked for nothing, 0.5 - 1 ms of a 5 ms sync point). */
static int rank_new_pages(const plan_list *sel, page_list *hot)
{
    plan_list fresh = {0};
    int rc = PD_OK;
    for (size_t i = 0; i < sel->n && rc == PD_OK; i++) {
        if (placed_has(sel->v[i].page))
            continue;
        if (plan_push(&fresh, sel->v[i].page) != 0)
            rc = PD_ENOMEM;
        else
            fresh.v[fresh.n - 1].rank = sel->v[i].rank;
    }
    if (fresh.n > 1)
        qsort(fresh.v, fresh.n, sizeof *fresh.v, cmp_plan_rank);
    for (size_t i = 0; i < fresh.n && rc == PD_OK; i++)
        if (page_push(hot, fresh.v[i].page) != 0)
            rc = PD_ENOMEM;
    free(fresh.v);
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
    plan_list sel = {0};
    page_list fast = {0}, before = {0}, covered = {0}, dropped = {0}, stale = {0}, hot = {0};
    benefit_regions br = {p, n, 0, NULL, 0};
    int rc = PD_OK;
    for (int i = 0; i < n && rc == PD_OK; i++)
        if (select_task_pages(&p[i], bytes[i], &sel) != 0)
            rc = PD_ENOMEM;
    if (rc == PD_OK && sel.n) {
        plan_unique(&sel); /* tasks may share pages */
        for (size_t i = 0; i < sel.n && rc == PD_OK; i++)
            if (page_push(&fast, sel.v[i].page) != 0)
                rc = PD_ENOMEM;
    }
    /* The difference: placed pages the plan drops (or no object covers any
     * more) go slow, planned pages not yet placed go fast, hottest first. */
    if (rc == PD_OK && placed_pages(&before) != 0)
        rc = PD_ENOMEM;
    /* What the plan leaves of that budget keeps pages that are there
     * already, in address order: keeping costs no move, while sending
     * them out would leave the room empty (first-touch pages the sampler
     * did not see, a plan that fills less than the capacity). What is left
     * then goes to sampled pages whose benefit pays for their move. */
    /* Placed pages no object covers any more (stale) leave in any case. */
    rt_runs cover = {0};
    if (rc == PD_OK && object_cover(&cover) != 0)
        rc = PD_ENOMEM;
    rt_runs_cursor in_cover = rt_runs_cursor_at(&cover);
    for (size_t i = 0; i < before.n && rc == PD_OK; i++)
        if (page_push(rt_runs_cursor_has(&in_cover, (uintptr_t)before.v[i]) ? &covered : &stale,
                      (uintptr_t)before.v[i]) != 0)
            rc = PD_ENOMEM;
    rt_runs_free(&cover);
    if (rc == PD_OK && !placed.unknown && fast.n < budget / RT_PAGE &&
        keep_placed(&covered, budget / RT_PAGE - fast.n, &sel, &fast) != 0)
        rc = PD_ENOMEM;
    if (rc == PD_OK && fast.n < budget / RT_PAGE &&
        (rt.thp == PD_THP_KEEP ? fill_room_by_units : fill_room_by_benefit)(&br, budget / RT_PAGE - fast.n, &sel,
                                                                           &fast) != 0)
        rc = PD_ENOMEM;
    if (rc == PD_OK && rt.thp != PD_THP_KEEP && !rt_env_off("PADDISER_DISPLACE_KEPT") &&
        displace_kept(&br, &sel, &fast) != 0)
        rc = PD_ENOMEM;
    int hot_first = 0;
    if (rc == PD_OK && (hot_first = hot_first_guard(p, n, &br, budget / RT_PAGE, &covered, &sel, &fast)) < 0)
        rc = PD_ENOMEM;
    page_cursor in_fast = cursor_at(&fast, 0); /* covered: in address order when the placement is known */
    for (size_t i = 0; i < covered.n && rc == PD_OK; i++)
        if (!cursor_has(&in_fast, (uintptr_t)covered.v[i]) && page_push(&dropped, (uintptr_t)covered.v[i]) != 0)
            rc = PD_ENOMEM;
    /* The plan's pages not placed yet: counted for the rule, ranked only
     * where they move (rank_new_pages). */
    size_t nnew = 0;
    for (size_t i = 0; i < sel.n && rc == PD_OK; i++)
        nnew += !placed_has(sel.v[i].page);
    /* A placement holding more fast memory than the plan may use (first
     * touch beyond the capacity, or beyond this process's part of a plan
     * across processes: the others count on the rest) is never kept. */
    int over = covered.n * RT_PAGE > budget;
    if (rc == PD_OK && !placed.unknown && !over && (nnew || dropped.n) &&
        keep_placement(p, n, &covered, &fast, nnew + dropped.n, kept_share, kept_bytes, kept_time)) {
        /* The placement stays; only what no object covers any more leaves. */
        pd_migrate_stats ignored = {0};
        move_chunked(&stale, PD_TIER_SLOW, &ignored, NULL);
        if (stale.n && placed_set(&covered) != 0) {
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
    } else if (rc == PD_OK && (rc = rank_new_pages(&sel, &hot)) == PD_OK) {
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
            if (exact ? placed_set(&fast) != 0 : confirm_placed(&before, &fast, &real) != 0)
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
                kept_share[i] = share_under(&p[i], refused ? &real : &fast, total_pages, &kept_bytes[i]);
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
    free(sel.v);
    free(fast.v);
    free(before.v);
    free(covered.v);
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
