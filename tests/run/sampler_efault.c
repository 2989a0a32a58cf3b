/* docs/runtime.md, "paddiser run: allocations and options", limits: while a
 * task runs, the mprotect page sampler keeps its sampled pages PROT_NONE,
 * and a system call that writes into one (read(2) here) fails with EFAULT
 * instead of faulting. Built against libpaddiser with the API; prints how
 * many of the page-sized reads into a registered 8 MiB buffer failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paddiser.h"

int main(void)
{
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 1 << 20;
    if (pd_init(&o) != PD_OK)
        return 1;
    size_t n = 8u << 20;
    char *p = aligned_alloc(4096, n);
    int fd = open("/dev/zero", O_RDONLY);
    if (!p || fd < 0)
        return 1;
    memset(p, 1, n);
    pd_object_register("buf", p, n, NULL);
    pd_task_begin(0);
    int failed = 0, efault = 0;
    for (size_t off = 0; off < n; off += 4096)
        if (read(fd, p + off, 4096) != 4096) {
            failed++;
            efault += errno == EFAULT;
        }
    pd_task_end(0);
    printf("reads failed: %d of %zu (%d with EFAULT)\n", failed, n / 4096, efault);
    pd_finalize();
    close(fd);
    free(p);
    return 0;
}
