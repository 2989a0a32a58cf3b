/* Range check against the process's own mappings (mapcheck.h). One pass
 * over /proc/self/maps, whose lines come sorted by address: the range must
 * be covered without a gap by mappings whose permissions start with "rw". */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/mapcheck.h"

int rt_range_is_writable_memory(const void *addr, size_t size, char *why, size_t whylen)
{
    uintptr_t lo = (uintptr_t)addr, hi = lo + size;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return 1;
    uintptr_t at = lo; /* first byte not yet known to be fine */
    int ok = 0;
    char line[512];
    while (at < hi && fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        char perms[8];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &a, &b, perms) != 3)
            continue;
        if (b <= at)
            continue;
        if (a > at) {
            snprintf(why, whylen, "bytes 0x%" PRIxPTR "-0x%" PRIxPTR " are not mapped", at, a < hi ? a : hi);
            break;
        }
        if (perms[0] != 'r' || perms[1] != 'w') {
            snprintf(why, whylen, "bytes 0x%" PRIxPTR "-0x%" PRIxPTR " are not writable memory (mapping %s)", at,
                     b < hi ? b : hi, perms);
            break;
        }
        at = b;
    }
    if (at >= hi)
        ok = 1;
    else if (feof(f) || !why[0])
        snprintf(why, whylen, "bytes 0x%" PRIxPTR "-0x%" PRIxPTR " are not mapped", at, hi);
    fclose(f);
    return ok;
}
