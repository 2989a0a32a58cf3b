/* Sync point, last step: the plan (plan_pages.c: which pages go to the
 * fast tier) against the placement the runtime keeps (the pages it has
 * put there), and the moves between them. Unless the gain-versus-cost rule
 * keeps the placement, pages leaving the fast tier go first, then the
 * plan's new pages are promoted hottest first (the tasks interleaved by
 * rank within their own plan, so a shortfall trims every task's coldest
 * pages alike); where the backend can (pd_backend.promote), refused pages
 * make room by demoting what the plan no longer gives fast memory, then
 * the plan's own coldest pages. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/page_runs.h"
#include "lib/plan_pages.h"
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

/* rt_plan_runs_by_rank's emit: the page onto a list. */
static int emit_page(void *ctx, uintptr_t page) { return page_push(ctx, page); }

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
    rt_runs runs; /* normalized */
    int unknown;  /* after an allocation failure: any registered page may be fast */
} placed;

/* Bumped whenever the placed set changes: the reused decision below must
 * rest on the placement it judged. Outside `placed`, which resets clear. */
static unsigned placed_gen;

void rt_migrate_reset(void)
{
    placed_gen++;
    rt_runs_free(&placed.runs);
    memset(&placed, 0, sizeof placed);
}

static size_t placed_bytes(void) { return rt_runs_pages(&placed.runs) * RT_PAGE; }

/* placed := r (normalized, taken over: r is left empty). */
static void placed_take(rt_runs *r)
{
    rt_migrate_reset();
    placed.runs = *r;
    *r = (rt_runs){0};
}

void rt_migrate_forget(const void *addr, size_t len)
{
    if (!placed.runs.n || !len)
        return;
    uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(RT_PAGE - 1);
    uintptr_t hi = (uintptr_t)addr + len, past = (hi + RT_PAGE - 1) & ~(uintptr_t)(RT_PAGE - 1);
    if (hi < lo || past < hi)
        past = UINTPTR_MAX; /* up to the end of the address space */
    /* The runs less the pages that start in [lo, hi): run arithmetic, not
     * a list of every placed page (which made each registration cost about
     * the fast memory's size in pages). */
    rt_runs drop = {0}, rest = {0};
    if (rt_runs_add(&drop, lo, past) != 0 || rt_runs_normalize(&drop) != 0 ||
        rt_runs_subtract(&placed.runs, &drop, &rest) != 0) {
        rt_runs_free(&drop);
        rt_runs_free(&rest);
        rt_migrate_reset();
        placed.unknown = 1; /* the next sync point submits every page, as if none were known */
        return;
    }
    rt_runs_free(&drop);
    placed_take(&rest);
}

/* placed := a copy of a normalized set of runs. */
static int placed_set_runs(const rt_runs *r)
{
    rt_runs copy = {0};
    if (rt_runs_add_all(&copy, r) != 0 || rt_runs_normalize(&copy) != 0) {
        rt_runs_free(&copy);
        return -1;
    }
    placed_take(&copy);
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
    int rc = rt_runs_add_all(&all, &placed.runs) == 0 ? PD_OK : PD_ENOMEM;
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
    if (rc == PD_OK && !placed.unknown) {
        if (rt_runs_normalize(&all) == 0)
            placed_take(&all);
        else
            rc = PD_ENOMEM;
    }
    if (rc != PD_OK) {
        rt_migrate_reset();
        placed.unknown = 1;
    }
    rt.fast_bytes = placed_bytes();
    rt_runs_free(&all);
    return rc;
}

/* The placed set as normalized runs into out; when the set is unknown,
 * every registered page. */
static int placed_runs(rt_runs *out)
{
    if (placed.unknown)
        return rt_objects_cover(out);
    return rt_runs_add_all(out, &placed.runs) == 0 ? rt_runs_normalize(out) : -1;
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

/* The pages of a plan's runs onto out, hottest first (by rank, then by
 * address), the list allocated once at their number: the plan's pages not
 * placed yet (the plan less the placed pages), what moves in, usually few
 * or none, listed only when the plan is applied (a kept placement moves
 * nothing); or the whole plan, when some did not fit. PD_OK or PD_ENOMEM. */
static int pages_by_rank(const rt_plan_runs *plan, page_list *out)
{
    size_t n = rt_plan_runs_npages(plan);
    if (n > out->cap) { /* one allocation, not a doubling one */
        void **v = realloc(out->v, n * sizeof *v);
        if (!v)
            return PD_ENOMEM;
        out->v = v;
        out->cap = n;
    }
    return rt_plan_runs_by_rank(plan, emit_page, out) == 0 ? PD_OK : PD_ENOMEM;
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
    page_list all = {0};
    int rc = pages_by_rank(sel, &all) == PD_OK ? 0 : -1;
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
 * receives them (normalized), for the caller to free. */
static int confirm_placed(const rt_runs *before, const rt_runs *fast, rt_runs *placed_now)
{
    rt_runs both = {0}, cover = {0};
    page_list all = {0};
    int rc = 0;
    if (rt_runs_add_all(&both, before) != 0 || rt_runs_add_all(&both, fast) != 0 || rt_runs_normalize(&both) != 0 ||
        runs_to_pages(&both, &all) != 0 || rt_objects_cover(&cover) != 0)
        rc = -1;
    rt_runs_free(&both);
    int *tier = rc == 0 ? malloc((all.n ? all.n : 1) * sizeof *tier) : NULL;
    if (!tier || rt.backend->query(rt.backend, all.v, all.n, tier) != 0)
        rc = -1;
    /* the pages in address order: one pass of the cover */
    rt_runs_cursor in_cover = rt_runs_cursor_at(&cover);
    for (size_t i = 0; i < all.n && rc == 0; i++)
        if (tier[i] == PD_TIER_FAST && rt_runs_cursor_has(&in_cover, (uintptr_t)all.v[i]))
            rc = rt_runs_add(placed_now, (uintptr_t)all.v[i], (uintptr_t)all.v[i] + RT_PAGE);
    if (rc == 0 && (rt_runs_normalize(placed_now) != 0 || placed_set_runs(placed_now) != 0))
        rc = -1;
    free(tier);
    free(all.v);
    rt_runs_free(&cover);
    return rc;
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
        double planned_t = rt_time_cb(&ctx, i, rt_share_under_runs(&p[i], planned, total_pages, &nb));
        cur_share[i] = rt_share_under_runs(&p[i], placed_now, total_pages, &cur_bytes[i]);
        cur_time[i] = rt_time_cb(&ctx, i, cur_share[i]);
        if (planned_t > d.planned_s)
            d.planned_s = planned_t;
        if (cur_time[i] > d.current_s)
            d.current_s = cur_time[i];
    }
    d.min_gain_s = rt_min_gain_share() * d.current_s;
    d.cost_s = (double)moves * rt_migrate_seconds_per_page();
    double trust = rt_tasks_gain_trust(p, n);
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
        double trust = rt_tasks_gain_trust(p, n);
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
    size_t budget_pages = budget / RT_PAGE;
    int rc = PD_OK;
    /* The difference: placed pages the plan drops (or no object covers any
     * more) go slow, planned pages not yet placed go fast, hottest first.
     * Placed pages no object covers any more (stale) leave in any case. */
    if (placed_runs(&before) != 0 || rt_objects_cover(&cover) != 0 || rt_runs_subtract(&before, &cover, &stale_r) != 0 ||
        rt_runs_subtract(&before, &stale_r, &covered) != 0)
        rc = PD_ENOMEM;
    rt_runs_free(&cover);
    int hot_first = 0;
    if (rc == PD_OK &&
        (hot_first = rt_plan_pages(p, n, bytes, budget_pages, placed.unknown ? NULL : &covered, &sel, &fast)) < 0)
        rc = PD_ENOMEM;
    /* The plan's pages not placed yet (all of them when the placement is
     * unknown) and the placed ones it drops: counted for the rule, listed
     * only where they move (pages_by_rank, and the dropped pages' list
     * when the plan is applied). */
    rt_runs none = {0}; /* when the placement is unknown, every planned page is new */
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
    } else if (rc == PD_OK && (rc = pages_by_rank(&fresh, &hot)) == PD_OK &&
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
        rt_runs real = {0}; /* what is fast now, where it was read back */
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
                kept_share[i] = rt_share_under_runs(&p[i], refused ? &real : &fast, total_pages, &kept_bytes[i]);
                kept_time[i] = rt_time_cb(&ctx, i, kept_share[i]);
                differs |= p[i].task->nhot == 0 && fabs(kept_share[i] - p[i].task->plan_share) > 1e-3;
            }
        }
        rt_runs_free(&real);
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
