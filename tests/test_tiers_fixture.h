/* Fixture sysfs trees for the tier-discovery and numa-backend tests, made in
 * a temp dir and pointed at with PADDISER_SYS_ROOT. */
#ifndef TEST_TIERS_FIXTURE_H
#define TEST_TIERS_FIXTURE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "lib/backend_numa.h"

static char fixture_root[256];

/* Writes root/rel (creating directories); aborts the test on failure. */
static inline void fx_put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", fixture_root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    assert_int_equal(pd_mkdir_p(path, 0755), 0);
    *slash = '/';
    assert_int_equal(pd_write_file(path, text, strlen(text)), 0);
}

static inline void fx_node(int id, const char *cpulist, unsigned long long mem_kb)
{
    char rel[128], text[256];
    snprintf(rel, sizeof rel, "devices/system/node/node%d/cpulist", id);
    fx_put(rel, cpulist);
    snprintf(rel, sizeof rel, "devices/system/node/node%d/meminfo", id);
    snprintf(text, sizeof text,
             "Node %d MemTotal:       %llu kB\nNode %d MemFree:        %llu kB\nNode %d MemUsed:        %llu kB\n", id,
             mem_kb, id, mem_kb / 2, id, mem_kb - mem_kb / 2);
    fx_put(rel, text);
}

static inline void fx_hmat(int id, const char *rl, const char *wl, const char *rb, const char *wb)
{
    char rel[160];
    const char *names[] = {"read_latency", "write_latency", "read_bandwidth", "write_bandwidth"};
    const char *vals[] = {rl, wl, rb, wb};
    for (int i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "devices/system/node/node%d/access0/initiators/%s", id, names[i]);
        fx_put(rel, vals[i]);
    }
    snprintf(rel, sizeof rel, "devices/system/node/node%d/access0/initiators/node0", id);
    fx_put(rel, ""); /* stands for the symlink to the initiator */
}

static inline void fx_tier(int tier, const char *nodelist)
{
    char rel[128];
    snprintf(rel, sizeof rel, "devices/virtual/memory_tiering/memory_tier%d/nodelist", tier);
    fx_put(rel, nodelist);
}

static inline void fx_begin(void)
{
    snprintf(fixture_root, sizeof fixture_root, "/tmp/pd_tiers_XXXXXX");
    assert_non_null(mkdtemp(fixture_root));
    setenv("PADDISER_SYS_ROOT", fixture_root, 1);
}

static inline int fx_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void fx_end(void)
{
    unsetenv("PADDISER_SYS_ROOT");
    if (fixture_root[0])
        nftw(fixture_root, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
    fixture_root[0] = '\0';
}

/* One node with CPUs, the default DRAM tier: what this machine has. */
static inline void fx_single_node(void)
{
    fx_put("devices/system/node/online", "0\n");
    fx_node(0, "0-1\n", 4 * 1024 * 1024);
    fx_tier(4, "0\n");
}

/* Node 0: DRAM with CPUs; node 1: CPU-less slow memory (CXL / PMem kmem) in
 * memory_tier22, HMAT access0 values for both. */
static inline void fx_two_node(void)
{
    fx_put("devices/system/node/online", "0-1\n");
    fx_node(0, "0-3\n", 8 * 1024 * 1024);
    fx_node(1, "\n", 16 * 1024 * 1024);
    fx_tier(4, "0\n");
    fx_tier(22, "1\n");
    fx_hmat(0, "100\n", "110\n", "20480\n", "18432\n");
    fx_hmat(1, "350\n", "420\n", "5120\n", "3072\n");
}

/* cmocka per-test setup/teardown: a fresh fixture root for every test. */
static inline int fx_setup(void **state)
{
    (void)state;
    fx_begin();
    return 0;
}

static inline int fx_teardown(void **state)
{
    (void)state;
    fx_end();
    return 0;
}

/* A numa backend on the two-node fixture (node 0 fast, node 1 slow) whose
 * system calls go to the test's fake kernel `sys`. */
static inline pd_backend *fx_numa_backend(size_t fast_capacity, const pd_numa_syscalls *sys)
{
    fx_two_node();
    pd_backend *b = pd_backend_numa_create(-1, -1, fast_capacity);
    assert_non_null(b);
    assert_int_equal(pd_backend_numa_set_syscalls(b, sys), 0);
    return b;
}

#endif
