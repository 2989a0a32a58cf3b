/* Sync point, last step: each task's hottest sampled regions (by the
 * next-instance weights, the order of its bytes curve) up to its planned
 * bytes go to the fast tier, every other registered page to the slow tier. */
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

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
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

/* Pages of a task's hottest regions (by next-instance weight, the order of
 * its bytes curve) up to its planned bytes. page_select's pd_select_plan
 * wants one count per page; a region's pages share one sample, so the walk
 * is per region here, O(samples) instead of O(pages). */
static int select_task_pages(const task_pred *tp, size_t budget, page_list *fast)
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
    size_t used = 0;
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
        for (uintptr_t p = lo & ~(uintptr_t)(RT_PAGE - 1); p < hi && used < budget; p += RT_PAGE) {
            if (page_push(fast, p) != 0) {
                rc = -1;
                break;
            }
            used += RT_PAGE;
        }
    }
    free(order);
    return rc;
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

int rt_migrate(task_pred *p, int n, const size_t *bytes)
{
    page_list fast = {0}, slow = {0};
    int rc = PD_OK;
    for (int i = 0; i < n && rc == PD_OK; i++)
        if (select_task_pages(&p[i], bytes[i], &fast) != 0)
            rc = PD_ENOMEM;
    if (rc == PD_OK) {
        if (fast.n)
            qsort(fast.v, fast.n, sizeof *fast.v, cmp_ptr);
        size_t k = 0;
        for (size_t i = 0; i < fast.n; i++) /* tasks may share regions */
            if (k == 0 || fast.v[k - 1] != fast.v[i])
                fast.v[k++] = fast.v[i];
        fast.n = k;
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
        pd_migrate_stats total = {0};
        size_t fast_ok = 0;
        if (release_stale() != 0 || remember_fast(&fast) != 0)
            rc = PD_ENOMEM;
        move_chunked(&slow, PD_TIER_SLOW, &total, NULL); /* cold out first: frees room */
        move_chunked(&fast, PD_TIER_FAST, &total, &fast_ok);
        rt.last_migration = total;
        rt.fast_bytes = fast_ok * RT_PAGE;
        if (total.pages_failed)
            rt_message("migration: %zu of %zu pages not moved (enomem %zu, ebusy %zu, efault %zu, other %zu)",
                       total.pages_failed, total.pages_requested, total.enomem, total.ebusy, total.efault,
                       total.other_errors);
    }
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
