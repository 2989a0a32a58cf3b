/* Allocation-free scanning of /proc text for the samplers (cpu.c, io.c).
 * src/common's pd_parse_* want a whole string; these walk a line in place. */
#ifndef PD_PROBE_SCAN_H
#define PD_PROBE_SCAN_H

#include <stdbool.h>
#include <string.h>

/* Unsigned decimal at *p after blanks (not newlines): advances *p past it.
 * False, *p untouched, when there is none. */
static inline bool pd_scan_u64(const char **p, unsigned long long *out)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = 0;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (unsigned long long)(*s++ - '0');
    *p = s;
    *out = v;
    return true;
}

/* Start of the line after the one at p (the terminating NUL on the last). */
static inline const char *pd_next_line(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? nl + 1 : p + strlen(p);
}

#endif
