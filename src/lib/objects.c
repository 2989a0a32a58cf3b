/* Data-object registry: the typed API and the paper's LB_HM_config. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/mapcheck.h"
#include "lib/page_sampler.h"
#include "lib/placement.h"
#include "lib/runtime_internal.h"

static int hint_valid(const pd_access_hint *h)
{
    return (unsigned)h->pattern <= PD_PATTERN_RANDOM && (h->input_dependent == 0 || h->input_dependent == 1);
}

/* Does [addr, addr+size) overlap a registered object other than skip and
 * those marked rebinding (objects LB_HM_config is moving in one call)? */
static int overlaps(const void *addr, size_t size, int skip)
{
    uintptr_t lo = (uintptr_t)addr, hi = lo + size;
    for (size_t i = 0; i < rt.nobjects; i++) {
        const rt_object *o = &rt.objects[i];
        if (!o->used || o->rebinding || (int)i == skip)
            continue;
        uintptr_t olo = (uintptr_t)o->addr, ohi = olo + o->size;
        if (lo < ohi && olo < hi)
            return 1;
    }
    return 0;
}

/* The application's own writable memory, or a one-line message and no. */
static int range_ok(const char *call, const char *name, const void *addr, size_t size)
{
    char why[160] = "";
    if (rt_range_is_writable_memory(addr, size, why, sizeof why))
        return 1;
    rt_message("%s(\"%s\", %p, %zu): %s", call, name ? name : "(unnamed)", addr, size, why);
    return 0;
}

/* Where a registered (or moved) object's pages start. By default where
 * first touch put them: nothing moves at registration (moving a whole
 * footprint out costs footprint / migration bandwidth, seconds per GiB),
 * the base instance runs on that placement (its measured DRAM share enters
 * the prediction), and the next plan moves only its difference to it
 * (rt_migrate_adopt learns the fast pages). PADDISER_START_TIER=slow moves
 * every page to the slow tier instead, so the base instance is profiled
 * slow-only. */
static void place_initial(rt_object *o)
{
    rt_thp_prepare(o->addr, o->size); /* first: placement then moves base pages */
    if (!rt.backend || !o->size)
        return;
    uintptr_t lo = (uintptr_t)o->addr & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)o->addr + o->size + PD_SAMPLE_PAGE - 1) & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    rt_migrate_forget((void *)lo, (size_t)(hi - lo));
    /* The sim backend's first touch of pages it has not seen, now, in
     * registration order; numa charges what is on the fast node. Pages
     * touched later are learned at the next sync point or plan
     * (rt_migrate_adopt). A slow start's placement that ran out of memory
     * is made there again, and its pages learned: the sim backend had no
     * tier for them, and the runtime then never placed them. */
    int tier = rt.start_slow ? PD_TIER_SLOW : PD_PLACE_FIRST_TOUCH;
    pd_migrate_stats st = {0};
    int rc = rt.backend->place(rt.backend, (void *)lo, (size_t)(hi - lo), tier, &st);
    o->place_tier = tier;
    o->adopt = tier == PD_PLACE_FIRST_TOUCH || pd_backend_out_of_memory(rc);
    rt.adopt_pending |= o->adopt;
}

typedef struct {
    uintptr_t lo, hi;
} page_span;

static int cmp_span(const void *a, const void *b)
{
    const page_span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The backend stops charging the pages of [addr, addr+size) that no
 * registered object covers now (a page may be shared with a neighbour, or
 * with the object's own new range after an update): the memory may be freed
 * and its address reused, so it must not keep fast-memory budget. */
static void release_uncovered(const void *addr, size_t size)
{
    if (!rt.backend || !rt.backend->release || !size)
        return;
    const uintptr_t pmask = (uintptr_t)PD_SAMPLE_PAGE - 1;
    uintptr_t lo = (uintptr_t)addr & ~pmask, hi = ((uintptr_t)addr + size + pmask) & ~pmask;
    page_span *cover = malloc((rt.nobjects ? rt.nobjects : 1) * sizeof *cover);
    size_t n = 0;
    for (size_t i = 0; cover && i < rt.nobjects; i++) {
        const rt_object *o = &rt.objects[i];
        uintptr_t olo = (uintptr_t)o->addr & ~pmask, ohi = ((uintptr_t)o->addr + o->size + pmask) & ~pmask;
        if (o->used && olo < hi && lo < ohi)
            cover[n++] = (page_span){olo, ohi};
    }
    if (!cover) { /* out of memory: give back only the certainly unshared pages */
        if (hi - lo > 2 * (pmask + 1))
            rt.backend->release(rt.backend, (void *)(lo + pmask + 1), hi - lo - 2 * (pmask + 1));
        return;
    }
    qsort(cover, n, sizeof *cover, cmp_span);
    uintptr_t at = lo;
    for (size_t i = 0; i < n; i++) {
        if (cover[i].lo > at)
            rt.backend->release(rt.backend, (void *)at, cover[i].lo - at);
        if (cover[i].hi > at)
            at = cover[i].hi;
    }
    if (at < hi)
        rt.backend->release(rt.backend, (void *)at, hi - at);
    free(cover);
}

static int register_locked(const char *name, void *addr, size_t size, const pd_access_hint *hint, int owned)
{
    if (!addr || size == 0 || (uintptr_t)addr + size < (uintptr_t)addr)
        return PD_EINVAL;
    if (hint && !hint_valid(hint))
        return PD_EINVAL;
    if (!owned && !range_ok("pd_object_register", name, addr, size))
        return PD_EINVAL;
    if (overlaps(addr, size, -1))
        return PD_EINVAL;
    /* The same name as an unregistered object: the same object, for a new
     * input (freed, then allocated again). It keeps its id, and with it its
     * profile history and refined alpha; a different pattern starts alpha
     * afresh. */
    for (size_t i = 0; name && i < rt.nobjects; i++) {
        rt_object *o = &rt.objects[i];
        if (o->used || !o->name || strcmp(o->name, name))
            continue;
        o->used = 1;
        o->addr = addr;
        o->size = size;
        if (hint && hint->pattern != o->alpha.hint.pattern) {
            pd_alpha_init(&o->alpha, hint);
            o->alpha0 = o->alpha.alpha;
        }
        place_initial(o);
        rt.ranges_dirty = 1;
        rt.plan_stale = 1;
        rt.layout_gen++;
        return (int)i;
    }
    if (rt.nobjects == rt.cap_objects) {
        size_t ncap = rt.cap_objects ? rt.cap_objects * 2 : 16;
        rt_object *n = realloc(rt.objects, ncap * sizeof *n);
        if (!n)
            return PD_ENOMEM;
        rt.objects = n;
        rt.cap_objects = ncap;
    }
    char fallback[48];
    if (!name) {
        snprintf(fallback, sizeof fallback, "object%zu", rt.nobjects);
        name = fallback;
    }
    char *copy = pd_strdup(name);
    if (!copy)
        return PD_ENOMEM;
    rt_object *o = &rt.objects[rt.nobjects];
    memset(o, 0, sizeof *o);
    o->used = 1;
    o->name = copy;
    o->addr = addr;
    o->size = size;
    pd_access_hint h = {PD_PATTERN_UNKNOWN, 0, 0, 0};
    if (hint)
        h = *hint;
    pd_alpha_init(&o->alpha, &h);
    o->alpha0 = o->alpha.alpha;
    place_initial(o);
    rt.ranges_dirty = 1;
    rt.plan_stale = 1;
    rt.layout_gen++;
    return (int)rt.nobjects++;
}

int pd_object_register(const char *name, void *addr, size_t size, const pd_access_hint *hint)
{
    pthread_mutex_lock(&rt.lock);
    int rc = rt_ready_locked() ? register_locked(name, addr, size, hint, 0) : PD_ESTATE;
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int rt_object_register_owned(const char *name, void *addr, size_t size, const pd_access_hint *hint)
{
    pthread_mutex_lock(&rt.lock);
    int rc = rt_ready_locked() ? register_locked(name, addr, size, hint, 1) : PD_ESTATE;
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

static int update_locked(int id, void *addr, size_t size)
{
    if (id < 0 || !addr || size == 0 || (uintptr_t)addr + size < (uintptr_t)addr)
        return id < 0 ? PD_ENOTFOUND : PD_EINVAL;
    if ((size_t)id >= rt.nobjects || !rt.objects[id].used)
        return PD_ENOTFOUND;
    if (overlaps(addr, size, id))
        return PD_EINVAL;
    rt_object *o = &rt.objects[id];
    if ((o->addr != addr || o->size != size) && !range_ok("pd_object_update", o->name, addr, size))
        return PD_EINVAL;
    if (o->addr == addr && o->size == size)
        return PD_OK;
    if (rt.sampling)
        pd_sampler_drop_object(id); /* the old range may be freed now */
    void *old_addr = o->addr;
    size_t old_size = o->size;
    o->addr = addr;
    o->size = size;
    release_uncovered(old_addr, old_size);
    place_initial(o);
    rt.ranges_dirty = 1;
    rt.plan_stale = 1;
    rt.layout_gen++;
    return PD_OK;
}

int pd_object_update(int id, void *addr, size_t size)
{
    pthread_mutex_lock(&rt.lock);
    int rc = rt_ready_locked() ? update_locked(id, addr, size) : PD_ESTATE;
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

int pd_object_unregister(int id)
{
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    if (!rt_ready_locked())
        rc = PD_ESTATE;
    else if (id < 0 || (size_t)id >= rt.nobjects || !rt.objects[id].used)
        rc = PD_ENOTFOUND;
    else {
        rt_object *o = &rt.objects[id];
        if (rt.sampling)
            pd_sampler_drop_object(id);
        o->used = 0; /* the name stays: registering it again revives the object */
        release_uncovered(o->addr, o->size);
        rt.ranges_dirty = 1;
        rt.plan_stale = 1;
        rt.layout_gen++;
    }
    pthread_mutex_unlock(&rt.lock);
    return rc;
}

/* The paper's API has no finalize call: when LB_HM_config started the
 * runtime, it is finalized at exit (per-task CSV, handler restored). */
static void finalize_at_exit(void)
{
    pd_finalize();
}

/* LB_HM_config and LB_HM_config_sizes: objects[i] is the object of
 * position i (named LB_HM_object<i>) whatever its pointer, so a call with
 * new pointers is a new input of the same objects and keeps their history.
 * The objects of the call move together: a new block may take the place of
 * another object's old one (free, then allocate, for the next input). */
static void *config_objects(void **objs, size_t n, const size_t *sizes)
{
    /* The paper's API needs no separate init call. */
    int irc = pd_init(NULL);
    if (irc != PD_OK && irc != PD_ESTATE) {
        errno = irc == PD_ENOMEM ? ENOMEM : EINVAL;
        return NULL;
    }
    static int exit_hook; /* under rt.lock: callers may be on several threads */
    pthread_mutex_lock(&rt.lock);
    if (irc == PD_OK && !exit_hook && atexit(finalize_at_exit) == 0)
        exit_hook = 1;
    int rc = rt.initialized ? PD_OK : PD_ESTATE;
    int *id = rc == PD_OK ? malloc((n ? n : 1) * sizeof *id) : NULL;
    if (rc == PD_OK && !id)
        rc = PD_ENOMEM;
    /* Which registered object each position is, and mark them all. */
    for (size_t i = 0; i < n && rc == PD_OK; i++) {
        char name[48];
        snprintf(name, sizeof name, "LB_HM_object%zu", i);
        id[i] = -1;
        for (size_t k = 0; k < rt.nobjects; k++)
            if (rt.objects[k].used && rt.objects[k].name && !strcmp(rt.objects[k].name, name))
                id[i] = (int)k;
        if (id[i] >= 0)
            rt.objects[id[i]].rebinding = 1;
    }
    /* Every new range is checked before anything changes, so a refused
     * call leaves the registry as it was: memory, wrap, objects outside the
     * call, and the new ranges against each other. */
    for (size_t i = 0; i < n && rc == PD_OK; i++)
        if ((uintptr_t)objs[i] + sizes[i] < (uintptr_t)objs[i] || overlaps(objs[i], sizes[i], -1) ||
            !range_ok("LB_HM_config", "LB_HM_object", objs[i], sizes[i]))
            rc = PD_EINVAL;
    for (size_t i = 0; i < n && rc == PD_OK; i++)
        for (size_t j = i + 1; j < n && rc == PD_OK; j++) {
            uintptr_t a = (uintptr_t)objs[i], b = (uintptr_t)objs[j];
            if (a < b + sizes[j] && b < a + sizes[i])
                rc = PD_EINVAL;
        }
    for (size_t i = 0; i < n && rc == PD_OK; i++) {
        if (id[i] >= 0) {
            rc = update_locked(id[i], objs[i], sizes[i]);
        } else {
            char name[48];
            snprintf(name, sizeof name, "LB_HM_object%zu", i);
            int r = register_locked(name, objs[i], sizes[i], NULL, 0);
            rc = r < 0 ? r : PD_OK;
        }
    }
    for (size_t k = 0; k < rt.nobjects; k++)
        rt.objects[k].rebinding = 0;
    free(id);
    pthread_mutex_unlock(&rt.lock);
    if (rc != PD_OK) {
        errno = rc == PD_ENOMEM ? ENOMEM : EINVAL;
        return NULL;
    }
    return objs;
}

void *LB_HM_config(void *objects, int *sizes)
{
    void **objs = objects;
    if (!objs || !sizes) {
        errno = EINVAL;
        return NULL;
    }
    size_t n = 0;
    while (objs[n]) {
        if (sizes[n] <= 0) { /* also what an int size computed past 2 GiB often wraps to */
            errno = EINVAL;
            return NULL;
        }
        n++;
    }
    size_t *sz = malloc((n ? n : 1) * sizeof *sz);
    if (!sz) {
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        sz[i] = (size_t)sizes[i];
    void *r = config_objects(objs, n, sz);
    free(sz);
    return r;
}

void *LB_HM_config_sizes(void *objects, const size_t *sizes)
{
    void **objs = objects;
    if (!objs || !sizes) {
        errno = EINVAL;
        return NULL;
    }
    size_t n = 0;
    for (; objs[n]; n++)
        if (sizes[n] == 0) {
            errno = EINVAL;
            return NULL;
        }
    return config_objects(objs, n, sizes);
}

/* The objects' pages as runs: for questions about many pages at once,
 * O(pages + objects), not O(pages x objects) (a program under `paddiser
 * run` registers every large allocation). */
int rt_objects_cover(rt_runs *out)
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

size_t rt_objects_total_bytes(void)
{
    /* In whole pages, the unit pages are placed in: an object of 4096
     * bytes that straddles a page boundary holds 2 pages, both of which
     * may be fast (counted in bytes, such a placement was a DRAM share of
     * 2, and the DRAM-only time from it negative). */
    const uintptr_t pmask = (uintptr_t)RT_PAGE - 1;
    size_t sum = 0;
    for (size_t i = 0; i < rt.nobjects; i++) {
        const rt_object *o = &rt.objects[i];
        if (o->used && o->size)
            sum += (size_t)((((uintptr_t)o->addr + o->size + pmask) & ~pmask) - ((uintptr_t)o->addr & ~pmask));
    }
    return sum;
}

uint64_t rt_input_signature(int sampled)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over (index, size) */
    for (size_t i = 0; i < rt.nobjects; i++) {
        if (!rt.objects[i].used)
            continue;
        uint64_t w[2] = {i, sampled ? rt.objects[i].sampled_size : rt.objects[i].size};
        const unsigned char *b = (const unsigned char *)w;
        for (size_t k = 0; k < sizeof w; k++)
            h = (h ^ b[k]) * 0x100000001b3ull;
    }
    return h;
}

int rt_sampler_sync_ranges(void)
{
    /* The sizes this instance runs with (the base of Eq. 1 when it is the
     * first), with or without sampling. Unchanged objects keep their values,
     * changed ones (ranges_dirty) get a new sample table below. */
    for (size_t i = 0; i < rt.nobjects; i++)
        if (rt.objects[i].used) {
            rt.objects[i].sampled_addr = rt.objects[i].addr;
            rt.objects[i].sampled_size = rt.objects[i].size;
        }
    if (!rt.sampling || !rt.ranges_dirty)
        return PD_OK;
    pd_sampler_range *r = calloc(rt.nobjects ? rt.nobjects : 1, sizeof *r);
    if (!r)
        return PD_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < rt.nobjects; i++)
        if (rt.objects[i].used)
            r[n++] = (pd_sampler_range){rt.objects[i].addr, rt.objects[i].size, (int)i};
    int rc = pd_sampler_set_ranges(r, n);
    free(r);
    if (rc != 0)
        return rc == -ENOMEM ? PD_ENOMEM : PD_EIO;
    rt.ranges_dirty = 0;
    return PD_OK;
}

int pd_object_page_tiers(int object, int *tier_out, size_t max_pages)
{
    if (max_pages && !tier_out)
        return PD_EINVAL;
    pthread_mutex_lock(&rt.lock);
    int rc = PD_OK;
    if (!rt_ready_locked())
        rc = PD_ESTATE;
    else if (object < 0 || (size_t)object >= rt.nobjects || !rt.objects[object].used)
        rc = PD_ENOTFOUND;
    else if (!rt.backend || !rt.backend->query)
        rc = PD_EUNSUPPORTED;
    if (rc != PD_OK) {
        pthread_mutex_unlock(&rt.lock);
        return rc;
    }
    const rt_object *o = &rt.objects[object];
    uintptr_t lo = (uintptr_t)o->addr & ~(uintptr_t)(PD_SAMPLE_PAGE - 1);
    size_t pages = (size_t)(((uintptr_t)o->addr + o->size - lo + PD_SAMPLE_PAGE - 1) / PD_SAMPLE_PAGE);
    size_t want = pages < max_pages ? pages : max_pages;
    /* The backend takes page lists: ask in chunks. */
    enum { CHUNK = 1024 };
    void *addr[CHUNK];
    int tier[CHUNK];
    for (size_t k = 0; k < want && rc == PD_OK; k += CHUNK) {
        size_t n = want - k < CHUNK ? want - k : CHUNK;
        for (size_t i = 0; i < n; i++)
            addr[i] = (void *)(lo + (k + i) * PD_SAMPLE_PAGE);
        if (rt.backend->query(rt.backend, addr, n, tier) != 0) {
            rc = PD_EIO;
            break;
        }
        for (size_t i = 0; i < n; i++)
            tier_out[k + i] = tier[i] == PD_TIER_FAST   ? PD_PAGE_FAST
                             : tier[i] == PD_TIER_SLOW ? PD_PAGE_SLOW
                                                       : PD_PAGE_UNKNOWN;
    }
    pthread_mutex_unlock(&rt.lock);
    if (rc != PD_OK)
        return rc;
    return pages > (size_t)INT_MAX ? INT_MAX : (int)pages;
}

void rt_objects_free(void)
{
    for (size_t i = 0; i < rt.nobjects; i++)
        free(rt.objects[i].name);
    free(rt.objects);
    rt.objects = NULL;
    rt.nobjects = rt.cap_objects = 0;
}
