/* What /proc/self/smaps says about the mappings over [addr, addr+len): for
 * the THP checks of the runtime (unit tests and the QEMU guest). */
#ifndef TEST_THP_SMAPS_H
#define TEST_THP_SMAPS_H

#include <stdio.h>
#include <string.h>

typedef struct {
    int vmas;                   /* mappings overlapping the range */
    int all_nh;                 /* every one has VmFlags "nh" (MADV_NOHUGEPAGE) */
    int any_eligible;           /* some "THPeligible: 1" */
    unsigned long anon_huge_kb; /* AnonHugePages, summed */
} thp_smaps;

/* 0, or -1 when smaps cannot be read. */
static int thp_smaps_read(const void *addr, size_t len, thp_smaps *out)
{
    memset(out, 0, sizeof *out);
    out->all_nh = 1;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    unsigned long lo = (unsigned long)addr, hi = lo + len;
    char line[1024];
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3) { /* a mapping's first line */
            in = a < hi && lo < b;
            out->vmas += in;
            continue;
        }
        if (!in)
            continue;
        unsigned long kb;
        int e;
        if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
            out->anon_huge_kb += kb;
        else if (sscanf(line, "THPeligible: %d", &e) == 1)
            out->any_eligible |= e != 0;
        else if (!strncmp(line, "VmFlags:", 8)) {
            char flags[sizeof line + 2];
            snprintf(flags, sizeof flags, "%s ", line + 8);
            flags[strcspn(flags, "\n")] = ' ';
            if (!strstr(flags, " nh "))
                out->all_nh = 0;
        }
    }
    fclose(f);
    if (!out->vmas)
        out->all_nh = 0;
    return 0;
}

#endif
