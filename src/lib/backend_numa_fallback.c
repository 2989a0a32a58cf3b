/* ==== TEMPORARY weak fallback: delete this file once src/lib/backend_numa.c
 * (issue #6) is on main. ====
 * It lets the runtime link before the NUMA backend exists; PD_BACKEND_AUTO
 * then ends with "no slow memory tier". It must stay in its own file whose
 * name sorts after backend_numa.c: a weak definition inside an object the
 * linker pulls from the archive for other reasons (runtime.o) would keep the
 * real backend_numa.o from ever being extracted; alone here, the strong
 * definition earlier in the archive wins. */
#include <errno.h>

#include "lib/backend.h"

__attribute__((weak)) pd_backend *pd_backend_numa_create(int fast_node, int slow_node, size_t fast_capacity)
{
    (void)fast_node;
    (void)slow_node;
    (void)fast_capacity;
    errno = ENODEV;
    return NULL;
}
