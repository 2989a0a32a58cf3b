/* Memory-tier discovery from sysfs (see include/paddiser_tiers.h). Read-only;
 * every path goes through pd_sys_path so fixture trees can stand in. */
#include "paddiser_tiers.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sysroot.h"
#include "common/util.h"

#define NODE_DIR "devices/system/node"
#define TIER_DIR "devices/virtual/memory_tiering"

static void __attribute__((format(printf, 3, 4))) set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Parses a kernel list ("0-3,8,10-11", or empty). Stores up to max ids in out
 * (may be NULL) and returns how many the list names, or -1 when malformed. */
static long parse_id_list(const char *s, int *out, int max)
{
    long count = 0;
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    while (*p && !isspace((unsigned char)*p)) {
        char *end;
        if (!isdigit((unsigned char)*p))
            return -1;
        errno = 0;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (errno || lo > INT_MAX)
            return -1;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -1;
            hi = strtoul(p, &end, 10);
            /* A range wider than any real machine is a corrupt file, not a loop to run. */
            if (errno || hi > INT_MAX || hi < lo || hi - lo > 65536)
                return -1;
            p = end;
        }
        for (unsigned long v = lo; v <= hi; v++, count++)
            if (out && count < max)
                out[count] = (int)v;
        if (*p == ',')
            p++;
        else if (*p && !isspace((unsigned char)*p))
            return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    return *p ? -1 : count;
}

/* Reads a whole small sysfs file relative to the sys root. NULL when absent
 * (errno kept). */
static char *read_sys(const char *rel, char *path, size_t pathlen)
{
    pd_sys_path(path, pathlen, rel);
    return pd_read_file(path, NULL);
}

/* 1 = value read, 0 = file absent, -1 = malformed (err filled). */
static int read_sys_u64(const char *rel, unsigned long long *out, char *err, size_t errlen)
{
    char path[4096];
    char *text = read_sys(rel, path, sizeof path);
    if (!text)
        return 0;
    int ok = pd_parse_u64(text, out);
    free(text);
    if (!ok) {
        set_err(err, errlen, "%s: not a number", path);
        return -1;
    }
    return 1;
}

/* "Node 0 MemTotal:  123 kB" lines: fills total/free in bytes. */
static int parse_node_meminfo(const char *text, pd_tier_node *n)
{
    int seen = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        char buf[256];
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        unsigned long long kb;
        char key[64], unit[8];
        int nodeid;
        if (sscanf(buf, "Node %d %63[^:]: %llu %7s", &nodeid, key, &kb, unit) == 4 && !strcmp(unit, "kB")) {
            if (!strcmp(key, "MemTotal")) {
                n->mem_total = kb * 1024ULL;
                seen |= 1;
            } else if (!strcmp(key, "MemFree")) {
                n->mem_free = kb * 1024ULL;
                seen |= 2;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return (seen & 1) ? 0 : -1;
}

static int read_node(pd_tier_node *n, char *err, size_t errlen)
{
    char rel[256], path[4096];
    snprintf(rel, sizeof rel, NODE_DIR "/node%d/cpulist", n->id);
    char *text = read_sys(rel, path, sizeof path);
    if (!text) {
        set_err(err, errlen, "%s: cannot read (%s)", path, strerror(errno));
        return -1;
    }
    long ncpus = parse_id_list(text, NULL, 0);
    free(text);
    if (ncpus < 0) {
        set_err(err, errlen, "%s: malformed CPU list", path);
        return -1;
    }
    n->ncpus = (int)ncpus;
    n->cpuless = ncpus == 0;

    snprintf(rel, sizeof rel, NODE_DIR "/node%d/meminfo", n->id);
    text = read_sys(rel, path, sizeof path);
    if (text) {
        int bad = parse_node_meminfo(text, n);
        free(text);
        if (bad) {
            set_err(err, errlen, "%s: no 'Node N MemTotal: <kB> kB' line", path);
            return -1;
        }
    }

    static const char *const hmat[] = {"read_latency", "write_latency", "read_bandwidth", "write_bandwidth"};
    unsigned long *dst[] = {&n->read_latency_ns, &n->write_latency_ns, &n->read_bw_mbps, &n->write_bw_mbps};
    for (size_t i = 0; i < PD_ARRAY_LEN(hmat); i++) {
        unsigned long long v;
        snprintf(rel, sizeof rel, NODE_DIR "/node%d/access0/initiators/%s", n->id, hmat[i]);
        int r = read_sys_u64(rel, &v, err, errlen);
        if (r < 0)
            return -1;
        if (r > 0) {
            *dst[i] = (unsigned long)v;
            n->has_hmat = 1;
        }
    }
    return 0;
}

/* Node ids from "online", else from the nodeN directory names. */
static long list_nodes(int *ids, int max, int *exposed, char *err, size_t errlen)
{
    char path[4096];
    char *text = read_sys(NODE_DIR "/online", path, sizeof path);
    if (text) {
        long n = parse_id_list(text, ids, max);
        free(text);
        if (n <= 0) {
            set_err(err, errlen, "%s: malformed node list", path);
            return -1;
        }
        *exposed = 1;
        return n < max ? n : max;
    }
    pd_sys_path(path, sizeof path, NODE_DIR);
    DIR *d = opendir(path);
    if (!d) {
        *exposed = 0;
        return 0;
    }
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long id;
        if (!strncmp(e->d_name, "node", 4) && pd_parse_long(e->d_name + 4, &id) && id >= 0 && id <= INT_MAX &&
            isdigit((unsigned char)e->d_name[4]))
            ids[n++] = (int)id;
    }
    closedir(d);
    *exposed = 1;
    return n;
}

static int read_tiers(pd_tiers *t, char *err, size_t errlen)
{
    char path[4096];
    pd_sys_path(path, sizeof path, TIER_DIR);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    t->has_tiering = 1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        long tier;
        const char *suffix = e->d_name + strlen("memory_tier");
        if (strncmp(e->d_name, "memory_tier", 11) || !isdigit((unsigned char)*suffix) ||
            !pd_parse_long(suffix, &tier) || tier > INT_MAX)
            continue;
        char rel[512];
        snprintf(rel, sizeof rel, TIER_DIR "/%s/nodelist", e->d_name);
        char *text = read_sys(rel, path, sizeof path);
        if (!text) {
            set_err(err, errlen, "%s: cannot read (%s)", path, strerror(errno));
            rc = -1;
            break;
        }
        int ids[PD_TIERS_MAX_NODES];
        long n = parse_id_list(text, ids, PD_TIERS_MAX_NODES);
        free(text);
        if (n < 0) {
            set_err(err, errlen, "%s: malformed node list", path);
            rc = -1;
            break;
        }
        t->ntiers++;
        for (long i = 0; i < n && i < PD_TIERS_MAX_NODES; i++)
            for (int k = 0; k < t->nnodes; k++)
                if (t->node[k].id == ids[i])
                    t->node[k].tier = (int)tier;
    }
    closedir(d);
    return rc;
}

const pd_tier_node *pd_tiers_node(const pd_tiers *t, int id)
{
    for (int i = 0; t && i < t->nnodes; i++)
        if (t->node[i].id == id)
            return &t->node[i];
    return NULL;
}

int pd_tiers_is_slower(const pd_tier_node *s, const pd_tier_node *f)
{
    if (s->tier >= 0 && f->tier >= 0 && s->tier != f->tier)
        return s->tier > f->tier;
    if (s->read_latency_ns && f->read_latency_ns)
        return s->read_latency_ns > f->read_latency_ns;
    return s->cpuless && !f->cpuless;
}

/* Better = lower tier, else lower HMAT latency, else more CPUs, else lower id. */
static int better(const pd_tier_node *a, const pd_tier_node *b)
{
    if (a->tier >= 0 && b->tier >= 0 && a->tier != b->tier)
        return a->tier < b->tier;
    if (a->read_latency_ns && b->read_latency_ns && a->read_latency_ns != b->read_latency_ns)
        return a->read_latency_ns < b->read_latency_ns;
    if (!a->cpuless != !b->cpuless)
        return !a->cpuless;
    return a->id < b->id;
}

int pd_tiers_choose(pd_tiers *t)
{
    const pd_tier_node *fast = NULL, *slow = NULL;
    int nmem = 0;
    for (int i = 0; i < t->nnodes; i++) {
        const pd_tier_node *n = &t->node[i];
        if (n->mem_total == 0)
            continue;
        nmem++;
        /* Fast memory is local to CPUs; only without any CPU node do we take any. */
        if (!fast || (fast->cpuless && !n->cpuless) || (fast->cpuless == n->cpuless && better(n, fast)))
            fast = n;
    }
    if (!fast && t->nnodes > 0)
        fast = &t->node[0]; /* memory size unknown: keep node ids usable */
    for (int i = 0; fast && i < t->nnodes; i++) {
        const pd_tier_node *n = &t->node[i];
        if (n == fast || n->mem_total == 0 || !pd_tiers_is_slower(n, fast))
            continue;
        if (!slow || better(n, slow))
            slow = n;
    }
    t->fast_node = fast ? fast->id : 0;
    t->slow_node = slow ? slow->id : -1;
    if (!slow) {
        if (nmem <= 1)
            snprintf(t->reason, sizeof t->reason, "no slow tier: single memory tier (node %d)", t->fast_node);
        else
            snprintf(t->reason, sizeof t->reason,
                     "no slow tier: %d memory nodes, none slower than node %d (same tier, no HMAT difference)", nmem,
                     t->fast_node);
        return 0;
    }
    if (slow->tier >= 0 && fast->tier >= 0 && slow->tier != fast->tier)
        snprintf(t->reason, sizeof t->reason, "node %d is in memory tier %d, node %d in tier %d", slow->id, slow->tier,
                 fast->id, fast->tier);
    else if (slow->read_latency_ns && fast->read_latency_ns)
        snprintf(t->reason, sizeof t->reason, "node %d HMAT read latency %lu ns > node %d's %lu ns", slow->id,
                 slow->read_latency_ns, fast->id, fast->read_latency_ns);
    else
        snprintf(t->reason, sizeof t->reason, "node %d is CPU-less (no tier or HMAT data to compare)", slow->id);
    return 1;
}

int pd_tiers_discover(pd_tiers *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (err && errlen)
        err[0] = '\0';
    int ids[PD_TIERS_MAX_NODES];
    long n = list_nodes(ids, PD_TIERS_MAX_NODES, &t->numa_exposed, err, errlen);
    if (n < 0)
        return -1;
    if (!t->numa_exposed) {
        /* Kernel without NUMA sysfs: all memory is one node. */
        t->nnodes = 1;
        t->node[0] = (pd_tier_node){.id = 0, .tier = -1};
        t->fast_node = 0;
        t->slow_node = -1;
        snprintf(t->reason, sizeof t->reason, "no slow tier: single memory tier (node 0, no NUMA in sysfs)");
        return 0;
    }
    for (long i = 0; i < n; i++) {
        pd_tier_node *node = &t->node[t->nnodes++];
        *node = (pd_tier_node){.id = ids[i], .tier = -1};
        if (read_node(node, err, errlen))
            return -1;
    }
    if (read_tiers(t, err, errlen))
        return -1;
    pd_tiers_choose(t);
    return 0;
}
