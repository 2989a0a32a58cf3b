/* Page-migration throughput between two NUMA nodes (issue #12, item 3): how
 * many bytes per second move_pages(2) and mbind(2) with MPOL_MF_MOVE move,
 * for batches of 4 KiB .. 64 MiB (doubling), with 4 KiB pages and with transparent huge
 * pages. The simulator's scorer charges migrations at a per-tier bandwidth
 * (src/sim/scorer.c); this is the benchmark that measures one.
 *
 * For each (method, page size, batch) the batch is allocated on node FROM,
 * faulted in, then moved FROM -> TO and back TO -> FROM, REPS times; each
 * direction's GB/s (1e9 bytes/s) is the median over the repeats (min and max
 * beside it). Every move is checked with a move_pages status query: a batch
 * whose pages did not all land is reported with its count and not timed.
 *
 * usage: migrate_bw [--from N] [--to M] [--reps R] [--max-bytes B] [--min-bytes B]
 * Needs two online NUMA nodes; with fewer it says so and exits 77 (skip).
 * One line per measurement:
 *   migrate_bw: method=move_pages page=4k batch=65536 dir=0->1 reps=5 gbs=... min=... max=... thp_share=...
 * THP batches start at 2 MiB; thp_share is the fraction of the batch the
 * kernel backed with huge pages before the first move (AnonHugePages). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SMALL_PAGE 4096UL
#define HUGE_PAGE (2UL << 20)
#define MAX_REPS 64

typedef enum { M_MOVE_PAGES, M_MBIND } method;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Nodes online, from /sys (no libnuma dependency beyond the syscall stubs). */
static int node_online(int node)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
    return access(path, R_OK) == 0;
}

/* Pages of [addr, addr+len) on `node`, by a move_pages status query of every
 * 4 KiB page (independent of how the move was asked for). -1 on error. */
static long pages_on_node(char *addr, size_t len, int node)
{
    size_t n = len / SMALL_PAGE;
    void **pages = malloc(n * sizeof *pages);
    int *status = malloc(n * sizeof *status);
    long on = -1;
    if (pages && status) {
        for (size_t i = 0; i < n; i++)
            pages[i] = addr + i * SMALL_PAGE;
        if (move_pages(0, n, pages, NULL, status, 0) == 0) {
            on = 0;
            for (size_t i = 0; i < n; i++)
                on += status[i] == node;
        }
    }
    free(pages);
    free(status);
    return on;
}

/* AnonHugePages (bytes) of the mapping that starts at addr (/proc/self/smaps). */
static size_t anon_huge_bytes(const char *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return 0;
    char line[512];
    int in = 0;
    size_t kb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = lo == (uintptr_t)addr;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %zu kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb * 1024;
}

/* Moves the batch to `node`: returns seconds, or -1 on failure. */
static double move_batch(method how, char *addr, size_t len, size_t step, int node)
{
    size_t n = len / step;
    void **pages = NULL;
    int *nodes = NULL, *status = NULL;
    if (how == M_MOVE_PAGES) {
        pages = malloc(n * sizeof *pages);
        nodes = malloc(n * sizeof *nodes);
        status = malloc(n * sizeof *status);
        if (!pages || !nodes || !status) {
            free(pages), free(nodes), free(status);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            pages[i] = addr + i * step, nodes[i] = node;
    }
    unsigned long mask = 1UL << node;
    double t0 = now_s();
    long rc = how == M_MOVE_PAGES ? move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE)
                                  : mbind(addr, len, MPOL_BIND, &mask, sizeof mask * 8, MPOL_MF_MOVE | MPOL_MF_STRICT);
    double t = now_s() - t0;
    int err = errno;
    free(pages), free(nodes), free(status);
    if (rc < 0) {
        fprintf(stderr, "migrate_bw: %s to node %d: %s\n", how == M_MOVE_PAGES ? "move_pages" : "mbind", node,
                strerror(err));
        return -1;
    }
    return t;
}

/* One (method, page size, batch): REPS round trips; prints both directions. */
static int measure(method how, int huge, size_t len, int from, int to, int reps)
{
    size_t align = huge ? HUGE_PAGE : SMALL_PAGE;
    size_t map_len = len + align;
    char *raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return -1;
    char *addr = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    /* a mapping of its own, so smaps' AnonHugePages is this batch's */
    if (addr > raw)
        munmap(raw, (size_t)(addr - raw));
    if (addr + len < raw + map_len)
        munmap(addr + len, (size_t)(raw + map_len - (addr + len)));
    madvise(addr, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    unsigned long mask = 1UL << from;
    if (mbind(addr, len, MPOL_BIND, &mask, sizeof mask * 8, 0) < 0) {
        munmap(addr, len);
        return -1;
    }
    memset(addr, 1, len);
    double thp_share = (double)anon_huge_bytes(addr) / (double)len;
    /* move_pages with THP: one address per huge page, as a THP-aware caller
     * asks (the kernel moves the whole folio); mbind takes the range. */
    size_t step = huge ? HUGE_PAGE : SMALL_PAGE;
    long want = (long)(len / SMALL_PAGE);
    double fwd[MAX_REPS], back[MAX_REPS];
    int nf = 0, nb = 0, failed = 0;
    for (int r = 0; r < reps; r++) {
        double t = move_batch(how, addr, len, step, to);
        long on = pages_on_node(addr, len, to);
        if (t > 0 && on == want)
            fwd[nf++] = (double)len / t / 1e9;
        else
            failed++;
        t = move_batch(how, addr, len, step, from);
        on = pages_on_node(addr, len, from);
        if (t > 0 && on == want)
            back[nb++] = (double)len / t / 1e9;
        else
            failed++;
    }
    const char *mname = how == M_MOVE_PAGES ? "move_pages" : "mbind";
    double *v[2] = {fwd, back};
    int nv[2] = {nf, nb}, src[2] = {from, to}, dst[2] = {to, from};
    for (int d = 0; d < 2; d++) {
        if (nv[d] == 0) {
            printf("migrate_bw: method=%s page=%s batch=%zu dir=%d->%d reps=0 gbs=nan failed=%d\n", mname,
                   huge ? "thp" : "4k", len, src[d], dst[d], failed);
            continue;
        }
        double lo = v[d][0], hi = v[d][0];
        for (int i = 1; i < nv[d]; i++)
            lo = v[d][i] < lo ? v[d][i] : lo, hi = v[d][i] > hi ? v[d][i] : hi;
        printf("migrate_bw: method=%s page=%s batch=%zu dir=%d->%d reps=%d gbs=%.3f min=%.3f max=%.3f "
               "thp_share=%.2f failed=%d\n",
               mname, huge ? "thp" : "4k", len, src[d], dst[d], nv[d], median(v[d], nv[d]), lo, hi, thp_share,
               failed);
    }
    fflush(stdout);
    munmap(addr, len);
    return 0;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    if (*end || v < SMALL_PAGE)
        return -1;
    *out = (size_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    int from = 0, to = 1, reps = 5;
    size_t min_bytes = 4 << 10, max_bytes = 64 << 20;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (ok && !strcmp(a, "--from"))
            from = atoi(v);
        else if (ok && !strcmp(a, "--to"))
            to = atoi(v);
        else if (ok && !strcmp(a, "--reps"))
            reps = atoi(v);
        else if (ok && !strcmp(a, "--max-bytes"))
            ok = parse_size(v, &max_bytes) == 0;
        else if (ok && !strcmp(a, "--min-bytes"))
            ok = parse_size(v, &min_bytes) == 0;
        else
            ok = 0;
        if (!ok || from < 0 || to < 0 || from > 63 || to > 63 || from == to || reps < 1 || reps > MAX_REPS) {
            fprintf(stderr, "usage: %s [--from N] [--to M] [--reps 1..%d] [--min-bytes B[K|M]] [--max-bytes B[K|M]]\n",
                    argv[0], MAX_REPS);
            return 2;
        }
    }
    if (!node_online(from) || !node_online(to)) {
        printf("migrate_bw: skipped: nodes %d and %d are not both online (one NUMA node here?)\n", from, to);
        return 77;
    }
    printf("migrate_bw: from=%d to=%d reps=%d batches %zu..%zu bytes, GB/s = 1e9 bytes/s, median of reps\n", from,
           to, reps, min_bytes, max_bytes);
    int rc = 0;
    for (int huge = 0; huge <= 1; huge++)
        for (method how = M_MOVE_PAGES; how <= M_MBIND; how++)
            for (size_t len = huge && min_bytes < HUGE_PAGE ? HUGE_PAGE : min_bytes; len <= max_bytes; len *= 2) {
                if (measure(how, huge, len, from, to, reps) < 0) {
                    fprintf(stderr, "migrate_bw: batch %zu: allocation or binding failed: %s\n", len,
                            strerror(errno));
                    rc = 1;
                }
            }
    return rc;
}
