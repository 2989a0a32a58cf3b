/* Transparent huge pages of registered objects (pd_thp_mode).
 *
 * The kernel migrates a THP as a whole: a page-granular plan on a THP-backed
 * object moves 2 MB per page it names (measured in the QEMU guest: a 6 MiB
 * plan put 11 MiB on the fast node, 1 MiB of it where no task worked). OFF
 * gives every registered object's whole pages MADV_NOHUGEPAGE (no new huge
 * pages at fault time, khugepaged leaves the range alone) and splits the huge
 * pages already there: MADV_COLD on one base page of a huge page makes the
 * kernel split it (it will not deactivate part of a huge page); only that one
 * base page is deactivated. The system-wide setting
 * (/sys/kernel/mm/transparent_hugepage) is a kernel tunable: only read. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/sysroot.h"
#include "common/util.h"
#include "lib/runtime_internal.h"

void rt_thp_init(void)
{
    rt.thp_off_bytes = 0;
    rt.thp_note[0] = '\0';
    if (rt.opt.thp == PD_THP_OFF || rt.opt.thp == PD_THP_KEEP)
        rt.thp = rt.opt.thp;
    else /* only real migration has the 2 MB problem */
        rt.thp = rt.backend && !strcmp(rt.backend->name, "numa") ? PD_THP_OFF : PD_THP_AUTO;
}

/* THP is "never" system-wide: no huge page can be there to split. */
static int thp_never(void)
{
    char path[4096];
    char *text = pd_read_file(pd_sys_path(path, sizeof path, "kernel/mm/transparent_hugepage/enabled"), NULL);
    int never = text && strstr(text, "[never]") != NULL;
    free(text);
    return never;
}

static void thp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void thp_note(const char *fmt, ...)
{
    if (rt.thp_note[0])
        return; /* the first problem is the one to report */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rt.thp_note, sizeof rt.thp_note, fmt, ap);
    va_end(ap);
    rt_message("%s", rt.thp_note);
}

void rt_thp_prepare(void *addr, size_t size)
{
    if (rt.thp != PD_THP_OFF || !size)
        return;
    uintptr_t page = pd_page_size();
    /* Whole pages only: the pages at the ends are shared with other data. */
    uintptr_t lo = ((uintptr_t)addr + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)addr + size) & ~(page - 1);
    if (hi <= lo)
        return;
    if (madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE) != 0) {
        thp_note("madvise(MADV_NOHUGEPAGE) of %zu bytes at %p: %s; huge pages there move 2 MB at a time",
                 (size_t)(hi - lo), (void *)lo, strerror(errno));
        return;
    }
    rt.thp_off_bytes += hi - lo;
    if (thp_never())
        return;
    for (uintptr_t blk = lo & ~(uintptr_t)(RT_THP_UNIT - 1); blk < hi; blk += RT_THP_UNIT) {
        uintptr_t p = blk < lo ? lo : blk;
        if (madvise((void *)p, page, MADV_COLD) != 0) {
            thp_note("madvise(MADV_COLD) to split huge pages: %s (%s); huge pages already there move 2 MB at a time",
                     strerror(errno), errno == EINVAL ? "kernel before 5.4" : "range");
            return;
        }
    }
}
