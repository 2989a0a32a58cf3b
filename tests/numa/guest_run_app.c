/* An OpenMP program that knows nothing of paddiser, for `paddiser run` in
 * the two-node guest (scripts/numa-qemu.sh, tests/numa/init): two arrays of
 * 24 MiB, one per thread, and thread 1 sweeps its array three times as
 * often as thread 0, so a load-balanced plan gives thread 1's array the
 * fast memory. 12 instances of one parallel region. Prints a checksum; the
 * preload library (LD_PRELOAD) finds the region's tasks and the arrays
 * (malloc above its threshold) by itself.
 *
 * "guest_run_app realloc" then frees thread 1's array and allocates one of
 * the same size, as a program's next input would, and prints on stderr
 * whether it is the same block and how many of its pages are on node 0
 * (the fast node) before the free and after (move_pages queries): under
 * paddiser run the freed block is kept for reuse (docs/runtime.md, "Freed
 * blocks kept for reuse"), so its pages are where the plan put them. */
#define _GNU_SOURCE /* syscall */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N ((size_t)24 << 20 >> 3) /* doubles per array */

/* Pages of [p, p + bytes) on node 0, by a move_pages query. */
static long on_node0(const void *p, size_t bytes)
{
    enum { PAGE = 4096, BATCH = 1024 };
    long n0 = 0;
    void *pages[BATCH];
    int status[BATCH];
    for (size_t off = 0; off < bytes; off += (size_t)BATCH * PAGE) {
        unsigned long n = 0;
        for (; n < BATCH && off + n * PAGE < bytes; n++)
            pages[n] = (char *)p + off + n * PAGE;
        if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) != 0)
            return -1;
        for (unsigned long i = 0; i < n; i++)
            n0 += status[i] == 0;
    }
    return n0;
}

int main(int argc, char **argv)
{
    double *a[2];
    for (int t = 0; t < 2; t++) {
        a[t] = malloc(N * sizeof(double));
        if (!a[t]) {
            perror("guest_run_app: malloc");
            return 1;
        }
        for (size_t i = 0; i < N; i++)
            a[t][i] = (double)(i & 15);
    }
    double sum[2] = {0, 0};
    for (int inst = 0; inst < 12; inst++) {
#pragma omp parallel num_threads(2)
        {
            int t = omp_get_thread_num();
            double s = 0;
            for (int sweep = 0; sweep < (t == 1 ? 3 : 1); sweep++)
                for (size_t i = 0; i < N; i += 8) /* a line each */
                    s += a[t][i];
            sum[t] += s;
        }
    }
    printf("guest_run_app: checksum %.0f %.0f\n", sum[0], sum[1]);
    if (argc > 1 && !strcmp(argv[1], "realloc")) {
        /* page-aligned within the block: the whole pages it holds */
        const char *lo = (const char *)(((unsigned long)a[1] + 4095) & ~4095ul);
        size_t bytes = (N * sizeof(double) - (size_t)(lo - (const char *)a[1])) & ~(size_t)4095;
        long before = on_node0(lo, bytes);
        uintptr_t old = (uintptr_t)a[1]; /* compared, never used */
        free(a[1]);
        a[1] = malloc(N * sizeof(double));
        if (!a[1])
            return 1;
        long after = on_node0(lo, bytes);
        fprintf(stderr, "guest_run_app: reallocated: same block %s, node-0 pages %ld before the free, %ld after\n",
                (uintptr_t)a[1] == old ? "yes" : "no", before, (uintptr_t)a[1] == old ? after : -1);
    }
    free(a[0]);
    free(a[1]);
    return 0;
}
