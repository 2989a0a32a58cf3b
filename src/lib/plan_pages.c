/* The plan step of a sync point (plan_pages.h): which pages go to the
 * fast tier. Each task's hottest sampled regions (by the next-instance
 * weights, the order of its bytes curve) up to its planned bytes, as one
 * ranked sequence per task; pages several tasks plan, once at their best
 * rank. With THP kept, the plan is made of whole 2 MB units. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/util.h"
#include "lib/plan_pages.h"
#include "lib/runtime_internal.h"

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

/* Ranks after the plans' own pages (0 - 1): pages a room fill took, then
 * pages kept where they were. */
#define RANK_ROOM 1.5
#define RANK_KEPT 2.0

static uintptr_t page_up(uintptr_t a) { return (a + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1); }

/* Pages [lo, hi) of a region, or with THP kept the whole 2 MB units it
 * touches (within the object's pages), while the budget lasts, as the
 * next pages (*seq on) of the task's sequence: a unit is taken only whole,
 * so a task's fast bytes stay within its plan. units holds this task's
 * units so far (a region may share one with another). */
static int push_region(rt_plan_runs *out, const rt_object *o, uintptr_t lo, uintptr_t hi, size_t budget, size_t *used,
                       size_t *seq, rt_runs *units)
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
            seen = units->v[k].lo == u;
        if (seen)
            continue;
        if (*used + RT_THP_UNIT > budget)
            return 0;
        if (rt_runs_add(units, u, u + RT_THP_UNIT) != 0)
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
    rt_runs units = {0}; /* the task's THP units so far, one run each */
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
    rt_runs_free(&units);
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
    rt_runs cover = {0}; /* the registered objects' pages */
    if (rc == 0 && nu && rt_objects_cover(&cover) != 0)
        rc = -1;
    if (rc == 0 && nu) {
        qsort(u, nu, sizeof *u, cmp_unit_addr);
        for (size_t i = 0; i < nu; i++) {
            if (k && u[k - 1].unit == u[i].unit)
                u[k - 1].benefit += u[i].benefit;
            else
                u[k++] = u[i];
        }
        /* the units in address order */
        rt_runs_cursor in_fast = rt_runs_cursor_at(fast), in_cover = rt_runs_cursor_at(&cover);
        for (size_t i = 0; i < k; i++)
            for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT; pg += RT_PAGE)
                u[i].cost += rt_runs_cursor_has(&in_cover, pg) && !rt_runs_cursor_has(&in_fast, pg);
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
        rt_runs_cursor in_fast = rt_runs_cursor_at(fast), in_cover = rt_runs_cursor_at(&cover);
        for (uintptr_t pg = u[i].unit; pg < u[i].unit + RT_THP_UNIT && rc == 0; pg += RT_PAGE)
            if (rt_runs_cursor_has(&in_cover, pg) && !rt_runs_cursor_has(&in_fast, pg))
                rc = rt_runs_add(&extra, pg, pg + RT_PAGE);
    }
    free(u);
    rt_runs_free(&cover);
    if (rc == 0)
        rc = rt_runs_normalize(&extra);
    if (rc == 0)
        rc = add_pages(&extra, RANK_ROOM, sel, fast);
    rt_runs_free(&extra);
    return rc;
}

/* Fast share of a task's next-instance accesses if exactly the pages of
 * fast were on the fast tier: its sampled regions weighted as in its bytes
 * curve (per-page weight times pages); a task with nothing sampled gets
 * the fast share of all registered pages. *fast_bytes: the fast bytes
 * inside its regions. */
double rt_share_under_runs(const task_pred *tp, const rt_runs *fast, size_t total_pages, size_t *fast_bytes)
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
        size_t nf = rt_runs_count(fast, lo, hi);
        all += w * (double)np;
        on += w * (double)nf;
        nb += nf * RT_PAGE;
    }
    *fast_bytes = nb;
    if (all > 0)
        return on / all;
    if (!total_pages)
        return 0;
    size_t nf = rt_runs_pages(fast);
    return nf >= total_pages ? 1.0 : (double)nf / (double)total_pages;
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
        double trust = rt_tasks_gain_trust(br->p, br->n);
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
static double makespan_under_runs(task_pred *p, int n, const rt_runs *fast)
{
    size_t total_pages = rt_objects_total_bytes() / RT_PAGE, nb;
    plan_ctx ctx = {p, n, 0};
    double ms = 0;
    for (int i = 0; i < n; i++) {
        double t = rt_time_cb(&ctx, i, rt_share_under_runs(&p[i], fast, total_pages, &nb));
        ms = t > ms ? t : ms;
    }
    return ms;
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

int rt_plan_pages(task_pred *p, int n, const size_t *bytes, size_t budget_pages, const rt_runs *covered,
                  rt_plan_runs *sel, rt_runs *fast)
{
    benefit_regions br = {p, n, 0, NULL, 0};
    rt_runs none = {0}; /* hot-first keeps nothing either when the placement is unknown */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = select_task_pages(&p[i], bytes[i], sel);
    /* tasks may share pages: each once, at its best rank */
    if (rc == 0 && (rt_plan_runs_unique(sel) != 0 || rt_plan_runs_pages(sel, fast) != 0))
        rc = -1;
    /* What the plan leaves of the budget keeps pages that are there
     * already, in address order: keeping costs no move, while sending
     * them out would leave the room empty (first-touch pages the sampler
     * did not see, a plan that fills less than the capacity). What is left
     * then goes to sampled pages whose benefit pays for their move. */
    if (rc == 0 && covered && rt_runs_pages(fast) < budget_pages)
        rc = keep_placed(covered, budget_pages - rt_runs_pages(fast), sel, fast);
    if (rc == 0 && rt_runs_pages(fast) < budget_pages)
        rc = (rt.thp == PD_THP_KEEP ? fill_room_by_units : fill_room_by_benefit)(
            &br, budget_pages - rt_runs_pages(fast), sel, fast);
    if (rc == 0 && rt.thp != PD_THP_KEEP && !rt_env_off("PADDISER_DISPLACE_KEPT"))
        rc = displace_kept(&br, sel, fast);
    int hot_first = 0;
    if (rc == 0)
        hot_first = hot_first_guard(p, n, &br, budget_pages, covered ? covered : &none, sel, fast);
    free(br.v);
    return rc == 0 ? hot_first : -1;
}
