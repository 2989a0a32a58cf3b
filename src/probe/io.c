/* I/O sampler: per-interval deltas of the resolved counters. Block devices
 * from /proc/diskstats (sectors are 512 bytes whatever the device), NFS mounts
 * from /proc/self/mountstats (server-side bytes, READ/WRITE op counts). The
 * Lustre and GPFS scans are in io_lustre.c and io_gpfs.c; the rows of all
 * sources are made here (pd_io_emit). */
#include "probe/sample.h"
#include "probe/scan.h"

#include <stdio.h>
#include <string.h>

#include "common/csv.h"

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Target of the given kind whose printed name is the n bytes at name. */
static pd_io_target *find(pd_io_set *set, pd_io_kind kind, const char *name, size_t n)
{
    for (size_t i = 0; i < set->ntargets; i++) {
        pd_io_target *t = &set->targets[i];
        if (t->kind == kind && !t->seen && strlen(t->match) == n && memcmp(t->match, name, n) == 0)
            return t;
    }
    return NULL;
}

void pd_io_scan_diskstats(pd_io_set *set, const char *text)
{
    for (const char *p = text; *p; p = pd_next_line(p)) {
        unsigned long long major, minor, f[7];
        const char *q = p;
        if (!pd_scan_u64(&q, &major) || !pd_scan_u64(&q, &minor))
            continue;
        q = skip_blanks(q);
        const char *name = q;
        while (*q && *q != ' ' && *q != '\t' && *q != '\n')
            q++;
        pd_io_target *t = find(set, PD_IO_BLOCK, name, (size_t)(q - name));
        if (!t)
            continue;
        /* rd_ios rd_merges rd_sectors rd_ticks wr_ios wr_merges wr_sectors */
        int i = 0;
        while (i < 7 && pd_scan_u64(&q, &f[i]))
            i++;
        if (i < 7)
            continue;
        t->cur[0] = f[2] * 512;
        t->cur[1] = f[6] * 512;
        t->cur[2] = f[0];
        t->cur[3] = f[4];
        t->seen = true;
    }
}

void pd_io_scan_mountstats(pd_io_set *set, const char *text)
{
    pd_io_target *t = NULL;
    bool have_bytes = false;
    for (const char *p = text; *p; p = pd_next_line(p)) {
        if (strncmp(p, "device ", 7) == 0) {
            if (t)
                t->seen = have_bytes;
            const char *name = p + 7;
            const char *end = strstr(name, " mounted on ");
            const char *nl = strchr(name, '\n');
            t = (end && (!nl || end < nl)) ? find(set, PD_IO_NFS, name, (size_t)(end - name)) : NULL;
            have_bytes = false;
            if (t)
                t->cur[2] = t->cur[3] = 0; /* statvers without per-op lines: no ops */
            continue;
        }
        if (!t)
            continue;
        const char *q = skip_blanks(p);
        if (strncmp(q, "bytes:", 6) == 0) {
            /* normalread normalwrite directread directwrite serverread serverwrite ... */
            unsigned long long f[6];
            q += 6;
            int i = 0;
            while (i < 6 && pd_scan_u64(&q, &f[i]))
                i++;
            if (i == 6) {
                t->cur[0] = f[4];
                t->cur[1] = f[5];
                have_bytes = true;
            }
        } else if (strncmp(q, "READ:", 5) == 0) {
            q += 5;
            pd_scan_u64(&q, &t->cur[2]);
        } else if (strncmp(q, "WRITE:", 6) == 0) {
            q += 6;
            pd_scan_u64(&q, &t->cur[3]);
        }
    }
    if (t)
        t->seen = have_bytes;
}

const char *pd_io_kind_name(pd_io_kind kind)
{
    static const char *const n[] = {"none", "block", "nfs", "lustre", "gpfs"};
    return (unsigned)kind < PD_ARRAY_LEN(n) ? n[kind] : "none";
}

void pd_io_begin(pd_io_set *set)
{
    for (size_t i = 0; i < set->ntargets; i++)
        set->targets[i].seen = false;
}

int pd_io_emit(pd_io_set *set, double ts, double interval_s, const char *host, pd_str *out)
{
    int rows = 0;
    char buf[256];
    for (size_t i = 0; i < set->ntargets; i++) {
        pd_io_target *t = &set->targets[i];
        if (!t->seen) {
            t->valid = false; /* gone: its next appearance is a new baseline */
            continue;
        }
        if (t->valid) {
            unsigned long long d[4];
            for (int k = 0; k < 4; k++) /* reset or wrap: 0, not a burst */
                d[k] = t->cur[k] >= t->prev[k] ? t->cur[k] - t->prev[k] : 0;
            snprintf(buf, sizeof buf, "%.3f,%s,%s,", ts, host, pd_io_kind_name(t->kind));
            pd_str_append(out, buf);
            pd_csv_put_field(out, t->device);
            pd_str_append(out, ",");
            pd_csv_put_field(out, t->paths);
            snprintf(buf, sizeof buf, ",%.3f,%llu,%llu,%llu,%llu\n", interval_s, d[0], d[1], d[2], d[3]);
            pd_str_append(out, buf);
            rows++;
        }
        memcpy(t->prev, t->cur, sizeof t->prev);
        t->valid = true;
    }
    return rows;
}

int pd_io_sample(pd_io_set *set, const char *diskstats, const char *mountstats, double ts, double interval_s,
                 const char *host, pd_str *out)
{
    pd_io_begin(set);
    if (diskstats)
        pd_io_scan_diskstats(set, diskstats);
    if (mountstats)
        pd_io_scan_mountstats(set, mountstats);
    return pd_io_emit(set, ts, interval_s, host, out);
}
