/* Lustre client counters (llite.<fsname>-<id>.stats). The llite layer counts
 * VFS calls: read_bytes has one sample per read() and sums the bytes those
 * calls returned, page-cache hits included (unlike the NFS source, which
 * counts what crossed the wire). Lines of counters with no sample yet are
 * left out of the file. Format: tests/fixtures/probe/README.md. */
#include "probe/io_fs.h"
#include "probe/sample.h"
#include "probe/scan.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/sysroot.h"

bool pd_lustre_fsname(const char *source, char *out, size_t len)
{
    const char *name = NULL;
    for (const char *s = strstr(source, ":/"); s; s = strstr(s + 1, ":/"))
        name = s + 2;
    if (!name)
        return false;
    size_t n = strcspn(name, "/");
    if (n == 0 || n >= len)
        return false;
    memcpy(out, name, n);
    out[n] = '\0';
    return true;
}

/* "<fsname>-<hex>": the instance id is the client's superblock address. */
static bool is_instance_of(const char *entry, const char *fsname)
{
    size_t n = strlen(fsname);
    if (strncmp(entry, fsname, n) != 0 || entry[n] != '-' || entry[n + 1] == '\0')
        return false;
    for (const char *p = entry + n + 1; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
            return false;
    return true;
}

bool pd_lustre_instance(const char *fsname, char *instance, size_t ilen, char *stats_path, size_t plen,
                        pd_str *why)
{
    char dirs[2][PATH_MAX];
    pd_proc_path(dirs[0], sizeof dirs[0], "fs/lustre/llite");
    pd_sys_path(dirs[1], sizeof dirs[1], "kernel/debug/lustre/llite");
    int found = 0;
    char unreadable[PATH_MAX] = "";
    int unreadable_errno = 0;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(dirs[k]);
        if (!d)
            continue;
        for (struct dirent *e; (e = readdir(d));) {
            if (!is_instance_of(e->d_name, fsname))
                continue;
            if (found > 0 && strcmp(instance, e->d_name) == 0)
                continue; /* the same instance in both trees */
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s/stats", dirs[k], e->d_name) >= (int)sizeof path)
                continue;
            if (access(path, R_OK) != 0) {
                snprintf(unreadable, sizeof unreadable, "%s", path);
                unreadable_errno = errno;
                continue;
            }
            if (found++ == 0) {
                snprintf(instance, ilen, "%s", e->d_name);
                snprintf(stats_path, plen, "%s", path);
            }
        }
        closedir(d);
    }
    if (found == 1)
        return true;
    if (found > 1)
        pd_str_printf(why,
                      "%d llite instances of Lustre file system %s (it is mounted more than once), so which "
                      "one holds the path is unknown",
                      found, fsname);
    else if (*unreadable)
        pd_str_printf(why, "the Lustre client stats %s cannot be read: %s", unreadable, strerror(unreadable_errno));
    else
        pd_str_printf(why, "no Lustre client stats (llite %s-*/stats) in %s nor %s", fsname, dirs[0], dirs[1]);
    return false;
}

bool pd_lustre_scan(pd_io_target *t, const char *stats)
{
    unsigned long long v[4] = {0, 0, 0, 0}; /* read_bytes write_bytes read_ops write_ops */
    bool snapshot = false;
    for (const char *p = stats; *p; p = pd_next_line(p)) {
        int which;
        if (strncmp(p, "snapshot_time", 13) == 0 && (p[13] == ' ' || p[13] == '\t')) {
            snapshot = true;
            continue;
        }
        if (strncmp(p, "read_bytes", 10) == 0)
            which = 0;
        else if (strncmp(p, "write_bytes", 11) == 0)
            which = 1;
        else
            continue;
        /* name  <samples> samples [bytes] <min> <max> <sum> [<sumsq>] */
        const char *q = p + (which == 0 ? 10 : 11);
        unsigned long long samples, min, max, sum;
        if (!pd_scan_u64(&q, &samples))
            continue;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, "samples", 7) != 0)
            continue;
        q += 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q == '[') {
            const char *end = strchr(q, ']');
            const char *nl = strchr(q, '\n');
            if (!end || (nl && nl < end))
                continue;
            q = end + 1;
        }
        if (!pd_scan_u64(&q, &min) || !pd_scan_u64(&q, &max) || !pd_scan_u64(&q, &sum))
            continue;
        v[which] = sum;
        v[which + 2] = samples;
    }
    if (!snapshot)
        return false;
    memcpy(t->cur, v, sizeof v);
    t->seen = true;
    return true;
}
