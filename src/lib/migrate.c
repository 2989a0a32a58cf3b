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

static int in_sorted(const page_list *l, uintptr_t p)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)l->v[mid] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && (uintptr_t)l->v[lo] == p;
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
        uintptr_t lo = (uintptr_t)o->addr + (uintptr_t)(h->off_frac * (double)o->size);
        uintptr_t hi = (uintptr_t)o->addr + (uintptr_t)((h->off_frac + h->len_frac) * (double)o->size);
        if (hi > (uintptr_t)o->addr + o->size)
            hi = (uintptr_t)o->addr + o->size;
        rc = push_region(out, o, lo, hi, budget, &used, &units);
    }
    for (size_t k = first; k < out->n; k++)
        out->v[k].rank = ((double)(k - first) + 0.5) / (double)(out->n - first);
    free(units.v);
    free(order);
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

static void stats_add(pd_migrate_stats *a, const pd_migrate_stats *b)
{
    a->pages_requested += b->pages_requested;
    a->pages_moved += b->pages_moved;
    a->pages_failed += b->pages_failed;
    a->bytes_moved += b->bytes_moved;
    a->ebusy += b->ebusy;
    a->enomem += b->enomem;
    a->efault += b->efault;
    a->other_errors += b->other_errors;
}

static void move_chunked(page_list *l, int tier, pd_migrate_stats *total, size_t *ok_pages)
{
    const size_t chunk = 4096;
    for (size_t i = 0; i < l->n; i += chunk) {
        size_t n = l->n - i < chunk ? l->n - i : chunk;
        pd_migrate_stats st = {0};
        rt.backend->move(rt.backend, l->v + i, n, tier, &st);
        stats_add(total, &st);
        if (ok_pages)
            *ok_pages += st.pages_moved;
    }
}

/* Pages this runtime put on the fast tier last time, as runs. Those that an
 * object no longer covers (shrunk, moved, unregistered) would otherwise keep
 * their fast memory forever. */
static struct {
    uintptr_t *start;
    size_t *npages;
    size_t n;
} prev_fast;

void rt_migrate_reset(void)
{
    free(prev_fast.start);
    free(prev_fast.npages);
    memset(&prev_fast, 0, sizeof prev_fast);
}

static int remember_fast(const page_list *fast)
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
    prev_fast.start = start;
    prev_fast.npages = npages;
    prev_fast.n = runs;
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

/* Gives back the fast pages of last time that no object covers now. Their
 * failures are not counted: the memory may be gone. */
static int release_stale(void)
{
    page_list stale = {0};
    for (size_t r = 0; r < prev_fast.n; r++)
        for (size_t k = 0; k < prev_fast.npages[r]; k++) {
            uintptr_t pg = prev_fast.start[r] + k * RT_PAGE;
            if (!covered_by_object(pg) && page_push(&stale, pg) != 0) {
                free(stale.v);
                return -1;
            }
        }
    pd_migrate_stats ignored = {0};
    move_chunked(&stale, PD_TIER_SLOW, &ignored, NULL);
    free(stale.v);
    return 0;
}

/* Pages of the last plan that this one does not give fast memory. */
static int prev_not_planned(const page_list *fast, page_list *out)
{
    for (size_t r = 0; r < prev_fast.n; r++)
        for (size_t k = 0; k < prev_fast.npages[r]; k++) {
            uintptr_t pg = prev_fast.start[r] + k * RT_PAGE;
            if (!in_sorted(fast, pg) && page_push(out, pg) != 0)
                return -1;
        }
    return 0;
}

/* The plan's pages to the fast tier, hottest first. Demotion candidates,
 * coldest first: the last plan's pages this one drops (normally already
 * moved out above; those that would not move are tried again), then the
 * plan's own pages, coldest first. */
static int promote_plan(const plan_list *sel, const page_list *fast, pd_migrate_stats *st, pd_migrate_stats *demoted)
{
    page_list hot = {0}, cold = {0};
    int rc = 0;
    for (size_t i = 0; i < sel->n && rc == 0; i++)
        rc = page_push(&hot, sel->v[i].page);
    if (rc == 0 && rt.backend->promote) {
        rc = prev_not_planned(fast, &cold);
        for (size_t i = sel->n; i-- > 0 && rc == 0;)
            rc = page_push(&cold, sel->v[i].page);
        if (rc == 0)
            rt.backend->promote(rt.backend, hot.v, hot.n, cold.v, cold.n, st, demoted);
    } else if (rc == 0) {
        move_chunked(&hot, PD_TIER_FAST, st, NULL);
    }
    free(hot.v);
    free(cold.v);
    return rc;
}

int rt_migrate(task_pred *p, int n, const size_t *bytes)
{
    plan_list sel = {0};
    page_list fast = {0}, slow = {0};
    int rc = PD_OK;
    for (int i = 0; i < n && rc == PD_OK; i++)
        if (select_task_pages(&p[i], bytes[i], &sel) != 0)
            rc = PD_ENOMEM;
    if (rc == PD_OK && sel.n) {
        /* Tasks may share pages: each once, at its best rank. */
        qsort(sel.v, sel.n, sizeof *sel.v, cmp_plan_page);
        size_t k = 0;
        for (size_t i = 0; i < sel.n; i++)
            if (k == 0 || sel.v[k - 1].page != sel.v[i].page)
                sel.v[k++] = sel.v[i];
        sel.n = k;
        for (size_t i = 0; i < sel.n && rc == PD_OK; i++)
            if (page_push(&fast, sel.v[i].page) != 0)
                rc = PD_ENOMEM;
        qsort(sel.v, sel.n, sizeof *sel.v, cmp_plan_rank);
    }
    if (rc == PD_OK) {
        for (size_t o = 0; o < rt.nobjects && rc == PD_OK; o++) {
            const rt_object *ob = &rt.objects[o];
            if (!ob->used)
                continue;
            uintptr_t lo = (uintptr_t)ob->addr & ~(uintptr_t)(RT_PAGE - 1);
            for (uintptr_t pg = lo; pg < (uintptr_t)ob->addr + ob->size; pg += RT_PAGE)
                if (!in_sorted(&fast, pg) && page_push(&slow, pg) != 0) {
                    rc = PD_ENOMEM;
                    break;
                }
        }
    }
    if (rc == PD_OK) {
        pd_migrate_stats total = {0}, promoted = {0}, demoted = {0};
        if (release_stale() != 0)
            rc = PD_ENOMEM;
        move_chunked(&slow, PD_TIER_SLOW, &total, NULL); /* cold out first: frees room */
        if (promote_plan(&sel, &fast, &promoted, &demoted) != 0)
            rc = PD_ENOMEM;
        if (remember_fast(&fast) != 0)
            rc = PD_ENOMEM;
        stats_add(&total, &promoted);
        rt.last_migration = total;
        rt.last_demoted = demoted;
        rt.fast_bytes = promoted.pages_moved * RT_PAGE;
        if (total.pages_failed)
            rt_message("migration: %zu of %zu pages not moved (enomem %zu, ebusy %zu, efault %zu, other %zu), "
                       "%zu demoted to make room",
                       total.pages_failed, total.pages_requested, total.enomem, total.ebusy, total.efault,
                       total.other_errors, demoted.pages_moved);
    }
    free(sel.v);
    free(fast.v);
    free(slow.v);
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
