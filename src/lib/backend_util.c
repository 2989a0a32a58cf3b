/* Helpers shared by the page-placement backends (backend.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/backend.h"

static int cmp_pos(const void *a, const void *b)
{
    const pd_page_pos *x = a, *y = b;
    uintptr_t px = (uintptr_t)x->page, py = (uintptr_t)y->page;
    if (px != py)
        return px < py ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

pd_page_pos *pd_page_index(void *const *pages, size_t n)
{
    pd_page_pos *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ix[i] = (pd_page_pos){pages[i], i};
    qsort(ix, n, sizeof *ix, cmp_pos);
    return ix;
}

long pd_page_index_find(const pd_page_pos *ix, size_t n, const void *page)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)ix[mid].page < (uintptr_t)page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ix[lo].page == page ? (long)ix[lo].at : -1;
}

int pd_backend_out_of_memory(int rc) { return rc == -ENOMEM || (rc == -1 && errno == ENOMEM); }

void pd_migrate_stats_add(pd_migrate_stats *a, const pd_migrate_stats *b)
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
