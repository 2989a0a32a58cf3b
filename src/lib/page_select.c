/* Hottest-pages-first curves and page choice (see page_select.h). Sorting
 * is a stable LSD radix sort on 8-bit digits that skips digits equal in all
 * keys: sampled counts are small, so pages sort in one to three passes, and
 * the 256-entry histogram stays cheap for the many small per-task lists. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/page_select.h"
#include "paddiser.h"

/* Sorts keys descending, payload (may be NULL) along; stable. */
static int radix_sort_desc(uint64_t *keys, size_t *payload, size_t n)
{
    if (n < 2)
        return PD_OK;
    uint64_t *k2 = malloc(n * sizeof *k2);
    size_t *p2 = payload ? malloc(n * sizeof *p2) : NULL;
    size_t cnt[256];
    if (!k2 || (payload && !p2)) {
        free(k2);
        free(p2);
        return PD_ENOMEM;
    }
    uint64_t or_all = 0, and_all = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        or_all |= keys[i];
        and_all &= keys[i];
    }
    for (int shift = 0; shift < 64; shift += 8) {
        if ((((or_all ^ and_all) >> shift) & 0xff) == 0)
            continue; /* same digit everywhere */
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[0xff - ((keys[i] >> shift) & 0xff)]++; /* descending */
        size_t sum = 0;
        for (size_t d = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t pos = cnt[0xff - ((keys[i] >> shift) & 0xff)]++;
            k2[pos] = keys[i];
            if (payload)
                p2[pos] = payload[i];
        }
        memcpy(keys, k2, n * sizeof *keys);
        if (payload)
            memcpy(payload, p2, n * sizeof *payload);
    }
    free(k2);
    free(p2);
    return PD_OK;
}

void pd_bytes_curve_free(pd_bytes_curve *c)
{
    if (!c)
        return;
    free(c->count);
    free(c->cum_acc);
    free(c->cum_pages);
    memset(c, 0, sizeof *c);
}

/* Builds the runs from (count, pages) pairs already sorted by count desc. */
static int curve_from_sorted(pd_bytes_curve *c, const uint64_t *count, const size_t *npages, size_t n,
                             size_t page_size)
{
    memset(c, 0, sizeof *c);
    c->page_size = page_size;
    size_t runs = 0;
    for (size_t i = 0; i < n; i++)
        if (count[i] > 0 && npages[i] > 0 && (runs == 0 || i == 0 || count[i] != count[i - 1]))
            runs++;
    c->count = malloc((runs ? runs : 1) * sizeof *c->count);
    c->cum_acc = malloc((runs ? runs : 1) * sizeof *c->cum_acc);
    c->cum_pages = malloc((runs ? runs : 1) * sizeof *c->cum_pages);
    if (!c->count || !c->cum_acc || !c->cum_pages) {
        pd_bytes_curve_free(c);
        return PD_ENOMEM;
    }
    uint64_t acc = 0;
    size_t pages = 0, j = 0;
    for (size_t i = 0; i < n; i++) {
        if (count[i] == 0 || npages[i] == 0)
            continue;
        if (npages[i] > UINT64_MAX / count[i] || acc > UINT64_MAX - count[i] * npages[i]) {
            pd_bytes_curve_free(c);
            return PD_EINVAL; /* accesses overflow 64 bits */
        }
        acc += count[i] * npages[i];
        pages += npages[i];
        if (j > 0 && c->count[j - 1] == count[i]) {
            c->cum_acc[j - 1] = acc;
            c->cum_pages[j - 1] = pages;
        } else {
            c->count[j] = count[i];
            c->cum_acc[j] = acc;
            c->cum_pages[j] = pages;
            j++;
        }
    }
    c->nruns = j;
    c->total = acc;
    return PD_OK;
}

int pd_bytes_curve_from_counts(pd_bytes_curve *c, const uint64_t *counts, size_t npages, size_t page_size)
{
    if (!c || (!counts && npages > 0) || page_size == 0)
        return PD_EINVAL;
    uint64_t *keys = malloc((npages ? npages : 1) * sizeof *keys);
    size_t *ones = malloc((npages ? npages : 1) * sizeof *ones);
    if (!keys || !ones) {
        free(keys);
        free(ones);
        return PD_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < npages; i++)
        if (counts[i] > 0) {
            keys[n] = counts[i];
            ones[n++] = 1;
        }
    int rc = radix_sort_desc(keys, NULL, n);
    if (rc == PD_OK)
        rc = curve_from_sorted(c, keys, ones, n, page_size);
    free(keys);
    free(ones);
    return rc;
}

int pd_bytes_curve_from_histogram(pd_bytes_curve *c, const uint64_t *count, const size_t *npages, size_t nbins,
                                  size_t page_size)
{
    if (!c || ((!count || !npages) && nbins > 0) || page_size == 0)
        return PD_EINVAL;
    uint64_t *keys = malloc((nbins ? nbins : 1) * sizeof *keys);
    size_t *order = malloc((nbins ? nbins : 1) * sizeof *order);
    size_t *pages = malloc((nbins ? nbins : 1) * sizeof *pages);
    int rc = PD_ENOMEM;
    if (keys && order && pages) {
        for (size_t i = 0; i < nbins; i++) {
            keys[i] = count[i];
            order[i] = i;
        }
        rc = radix_sort_desc(keys, order, nbins);
        if (rc == PD_OK) {
            for (size_t i = 0; i < nbins; i++)
                pages[i] = npages[order[i]];
            rc = curve_from_sorted(c, keys, pages, nbins, page_size);
        }
    }
    free(keys);
    free(order);
    free(pages);
    return rc;
}

size_t pd_bytes_curve_touched(const pd_bytes_curve *c)
{
    return c && c->nruns ? c->cum_pages[c->nruns - 1] : 0;
}

size_t pd_bytes_curve_pages(const pd_bytes_curve *c, double r)
{
    if (!c || c->nruns == 0 || !(r > 0))
        return 0;
    if (r >= 1)
        return pd_bytes_curve_touched(c);
    /* Relative slack so that r = k/total lands on k accesses, not k + eps. */
    double target = r * (double)c->total * (1 - 1e-12);
    size_t lo = 0, hi = c->nruns - 1; /* first run whose cumulative >= target */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)c->cum_acc[mid] >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    uint64_t prev_acc = lo ? c->cum_acc[lo - 1] : 0;
    size_t prev_pages = lo ? c->cum_pages[lo - 1] : 0;
    double need = ceil((target - (double)prev_acc) / (double)c->count[lo]);
    size_t run_pages = c->cum_pages[lo] - prev_pages;
    if (need < 1)
        need = 1;
    if (need > (double)run_pages)
        need = (double)run_pages;
    return prev_pages + (size_t)need;
}

size_t pd_bytes_curve_bytes(const pd_bytes_curve *c, double r)
{
    size_t p = pd_bytes_curve_pages(c, r);
    return c && p ? p * c->page_size : 0;
}

double pd_bytes_curve_share(const pd_bytes_curve *c, size_t bytes)
{
    if (!c || c->nruns == 0 || c->total == 0)
        return 0;
    size_t m = bytes / c->page_size;
    if (m >= pd_bytes_curve_touched(c))
        return 1;
    size_t lo = 0, hi = c->nruns - 1; /* first run whose cum_pages >= m */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->cum_pages[mid] >= m)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t prev_pages = lo ? c->cum_pages[lo - 1] : 0;
    uint64_t prev_acc = lo ? c->cum_acc[lo - 1] : 0;
    return ((double)prev_acc + (double)(m - prev_pages) * (double)c->count[lo]) / (double)c->total;
}

size_t pd_bytes_curve_cb(void *ctx, int task, double r)
{
    const pd_bytes_curve *curves = ctx;
    return pd_bytes_curve_bytes(&curves[task], r);
}

static int select_hottest(const uint64_t *counts, size_t npages, size_t max_pages, size_t *out_idx,
                          size_t *got)
{
    *got = 0;
    uint64_t *keys = malloc((npages ? npages : 1) * sizeof *keys);
    if (!keys)
        return PD_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < npages; i++)
        if (counts[i] > 0) {
            keys[n] = counts[i];
            out_idx[n++] = i; /* ascending index: the stable sort keeps ties so */
        }
    int rc = radix_sort_desc(keys, out_idx, n);
    free(keys);
    if (rc == PD_OK)
        *got = n < max_pages ? n : max_pages;
    return rc;
}

size_t pd_select_hottest(const uint64_t *counts, size_t npages, size_t max_pages, size_t *out_idx)
{
    size_t got = 0;
    if (counts && out_idx && max_pages > 0)
        select_hottest(counts, npages, max_pages, out_idx, &got);
    return got;
}

int pd_select_plan(const pd_task_pages *tasks, int ntasks, const size_t *bytes, size_t page_size,
                   size_t **sel, size_t *nsel)
{
    if (ntasks < 0 || (ntasks > 0 && (!tasks || !bytes || !sel || !nsel)) || page_size == 0)
        return PD_EINVAL;
    for (int i = 0; i < ntasks; i++)
        if (!tasks[i].counts && tasks[i].npages > 0)
            return PD_EINVAL;
    for (int i = 0; i < ntasks; i++) {
        sel[i] = NULL;
        nsel[i] = 0;
    }
    for (int i = 0; i < ntasks; i++) {
        size_t want = bytes[i] / page_size;
        if (want == 0 || tasks[i].npages == 0)
            continue;
        size_t *idx = malloc(tasks[i].npages * sizeof *idx);
        if (!idx)
            goto oom;
        size_t got;
        if (select_hottest(tasks[i].counts, tasks[i].npages, want, idx, &got) != PD_OK) {
            free(idx);
            goto oom;
        }
        if (got == 0) {
            free(idx);
            continue; /* nothing touched */
        }
        size_t *shrunk = realloc(idx, got * sizeof *idx);
        sel[i] = shrunk ? shrunk : idx;
        nsel[i] = got;
    }
    return PD_OK;
oom:
    for (int i = 0; i < ntasks; i++) {
        free(sel[i]);
        sel[i] = NULL;
        nsel[i] = 0;
    }
    return PD_ENOMEM;
}
