/* CPU/memory sampler: per-core shares of the jiffies that passed since the
 * previous sample, plus MemTotal/MemAvailable. Hand-parsed, no allocation
 * once the core table has its size. */
#include "probe/sample.h"
#include "probe/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Value in kB of "Key:   123 kB" in meminfo, or false. */
static bool meminfo_value(const char *meminfo, const char *key, unsigned long long *out)
{
    size_t klen = strlen(key);
    for (const char *p = meminfo; *p; p = pd_next_line(p)) {
        if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
            const char *v = p + klen + 1;
            return pd_scan_u64(&v, out);
        }
    }
    return false;
}

static bool grow_cores(pd_cpu_state *st, size_t core)
{
    if (core < st->ncores)
        return true;
    size_t n = st->ncores ? st->ncores : 16;
    while (n <= core)
        n *= 2;
    pd_cpu_core *c = realloc(st->cores, n * sizeof *c);
    if (!c)
        return false;
    memset(c + st->ncores, 0, (n - st->ncores) * sizeof *c);
    st->cores = c;
    st->ncores = n;
    return true;
}

int pd_cpu_sample(pd_cpu_state *st, const char *stat, const char *meminfo, double ts, const char *host,
                  pd_str *out, char *err, size_t errlen)
{
    unsigned long long mem_total, mem_avail;
    if (!meminfo || !meminfo_value(meminfo, "MemTotal", &mem_total)) {
        snprintf(err, errlen, "meminfo has no MemTotal line");
        return -1;
    }
    if (!meminfo_value(meminfo, "MemAvailable", &mem_avail)) {
        /* Kernels before 3.14: the usual estimate. */
        unsigned long long f = 0, b = 0, c = 0;
        meminfo_value(meminfo, "MemFree", &f);
        meminfo_value(meminfo, "Buffers", &b);
        meminfo_value(meminfo, "Cached", &c);
        mem_avail = f + b + c;
    }
    int rows = 0, lines = 0;
    char row[256];
    for (size_t i = 0; i < st->ncores; i++)
        st->cores[i].seen = false;
    for (const char *p = stat ? stat : ""; *p; p = pd_next_line(p)) {
        if (strncmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9')
            continue;
        const char *q = p + 3;
        unsigned long long core, cur[7] = {0};
        if (!pd_scan_u64(&q, &core) || core > 1u << 20)
            continue;
        for (int i = 0; i < 7; i++)
            if (!pd_scan_u64(&q, &cur[i]))
                break; /* very old kernels print fewer fields: the rest stay 0 */
        lines++;
        if (!grow_cores(st, (size_t)core)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        pd_cpu_core *c = &st->cores[core];
        if (c->valid) {
            unsigned long long d[7], total = 0;
            for (int i = 0; i < 7; i++) {
                /* A counter that went backwards (iowait does) counts as 0. */
                d[i] = cur[i] >= c->v[i] ? cur[i] - c->v[i] : 0;
                total += d[i];
            }
            double user = 0, sys = 0, idle = 0;
            if (total > 0) {
                user = 100.0 * (double)(d[0] + d[1]) / (double)total;
                sys = 100.0 * (double)(d[2] + d[5] + d[6]) / (double)total;
                idle = 100.0 * (double)(d[3] + d[4]) / (double)total;
            }
            int n = snprintf(row, sizeof row, "%.3f,%s,%llu,%.2f,%.2f,%.2f,%llu,%llu\n", ts, host, core, user,
                             sys, idle, mem_total, mem_avail);
            if (n > 0 && (size_t)n < sizeof row)
                pd_str_appendn(out, row, (size_t)n);
            rows++;
        }
        memcpy(c->v, cur, sizeof cur);
        c->valid = true;
        c->seen = true;
    }
    if (lines == 0) {
        snprintf(err, errlen, "stat has no cpuN lines");
        return -1;
    }
    /* A core that went offline may come back with its idle counter restarted
     * (some kernels reset the nohz idle time on hotplug): give it a fresh
     * baseline rather than a clamped delta that would read as 100% busy. */
    for (size_t i = 0; i < st->ncores; i++)
        if (!st->cores[i].seen)
            st->cores[i].valid = false;
    return rows;
}

void pd_cpu_state_free(pd_cpu_state *st)
{
    free(st->cores);
    st->cores = NULL;
    st->ncores = 0;
}
