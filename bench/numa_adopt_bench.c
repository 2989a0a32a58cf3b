/* What adopting a first-touched input costs the numa backend's first sync
 * point (issue #11: a sync point's cost follows what changes). An input of
 * MIB MiB is written (first touch), registered with the pages left where
 * they are (PADDISER_START_TIER=first-touch), and the first pd_sync_point()
 * after one empty task is timed: it is mostly the adoption, the kernel
 * asked where each page is (move_pages queries, 1024 pages a call), and a
 * plan that keeps everything (the fast capacity is larger than the input,
 * or no budget: nothing moves). Once with a fast-memory budget (the
 * backend charges the fast pages it finds) and once without.
 *
 * The machine needs no second node: the backend is created against a
 * two-node sysfs tree this program writes in a private temporary folder
 * (PADDISER_SYS_ROOT), and the real move_pages queries of its own pages
 * answer node 0, the fast one. Timings: a benchmark, not a test.
 *   make bench-numa-adopt [NUMA_ADOPT_ARGS="REPS MIB..."]   (default 5 256 1024) */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_stats.h"
#include "common/util.h"
#include "paddiser.h"

static char root[64];

static int put(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (pd_mkdir_p(path, 0755) != 0)
        return -1;
    *slash = '/';
    return pd_write_file(path, text, strlen(text));
}

/* node0 with CPUs, node1 without (the slow tier), 8 GiB each */
static int make_tree(void)
{
    snprintf(root, sizeof root, "/tmp/pd_numa_adopt_XXXXXX");
    if (!mkdtemp(root))
        return -1;
    const char *mem = "Node %d MemTotal: 8388608 kB\nNode %d MemFree: 8000000 kB\n";
    char text[128];
    int rc = 0;
    for (int n = 0; n < 2 && rc == 0; n++) {
        char rel[96];
        snprintf(rel, sizeof rel, "devices/system/node/node%d/cpulist", n);
        rc |= put(rel, n == 0 ? "0\n" : "\n");
        snprintf(rel, sizeof rel, "devices/system/node/node%d/meminfo", n);
        snprintf(text, sizeof text, mem, n, n);
        rc |= put(rel, text);
    }
    return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

/* the tree, whatever make_tree put in it */
static void remove_tree(void) { nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* One adoption: seconds of the first sync point, or a negative value. */
static double adopt_once(size_t len, int budget)
{
    unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return -1;
    memset(buf, 1, len);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NUMA;
    o.fast_capacity = budget ? 2 * len : 0;
    o.sampling = 0;
    double t = -1;
    int rc = pd_init(&o);
    if (rc != PD_OK) {
        fprintf(stderr, "numa_adopt_bench: pd_init: %s\n", pd_strerror(rc));
    } else {
        pd_access_hint h = {PD_PATTERN_STREAM, 1, 64, 0};
        if (pd_object_register("input", buf, len, &h) >= 0 && pd_task_begin(0) == PD_OK && pd_task_end(0) == PD_OK) {
            double t0 = pd_monotonic();
            rc = pd_sync_point();
            t = rc == PD_OK ? pd_monotonic() - t0 : -1;
        }
        pd_finalize();
    }
    munmap(buf, len);
    return t;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) {
        fprintf(stderr, "usage: numa_adopt_bench [REPS [MIB...]]\n");
        return 2;
    }
    if (make_tree() != 0) {
        fprintf(stderr, "numa_adopt_bench: cannot write the sysfs tree under /tmp\n");
        return 1;
    }
    setenv("PADDISER_SYS_ROOT", root, 1);
    setenv("PADDISER_START_TIER", "first-touch", 1);
    const char *dflt[] = {"256", "1024"};
    int nsizes = argc > 2 ? argc - 2 : 2;
    int rc = 0;
    printf("numa_adopt_bench: the first sync point after registering a first-touched input, %d runs each, "
           "median (min .. max)\n",
           reps);
    for (int i = 0; i < nsizes && rc == 0; i++) {
        size_t mib = (size_t)atol(argc > 2 ? argv[i + 2] : dflt[i]);
        for (int budget = 1; budget >= 0 && rc == 0; budget--) {
            double *t = calloc((size_t)reps, sizeof *t);
            for (int r = 0; r < reps && t && rc == 0; r++)
                if ((t[r] = adopt_once(mib << 20, budget)) < 0)
                    rc = 1;
            if (t && rc == 0) {
                double lo, hi;
                bench_range(t, (size_t)reps, &lo, &hi);
                printf("  %6zu MiB (%zu pages), %-12s %8.1f ms (%.1f .. %.1f)\n", mib, (mib << 20) / 4096,
                       budget ? "a budget:" : "no budget:", 1e3 * bench_median(t, (size_t)reps), 1e3 * lo, 1e3 * hi);
            }
            free(t);
        }
    }
    remove_tree();
    return rc;
}
