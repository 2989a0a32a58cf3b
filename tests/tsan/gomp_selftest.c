/* Checks tests/tsan/gomp_annotate.c both ways (run by make check-tsan):
 *   gomp_selftest        hands data across fork, barrier, critical and join
 *                        the way OpenMP guarantees: TSan must stay silent;
 *   gomp_selftest race   two threads of one team write one variable with no
 *                        synchronisation: TSan must report it (in
 *                        planted_race), or the annotations hide real races. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

static long shared_value;
static long by_thread[4];

static int clean(void)
{
    long before = 42, sum = 0;
    shared_value = before; /* fork: written before the region */
#pragma omp parallel num_threads(4)
    {
        int me = omp_get_thread_num();
        by_thread[me] = shared_value + me;
#pragma omp barrier
        long s = 0; /* barrier: every thread reads what the others wrote */
        for (int t = 0; t < omp_get_num_threads(); t++)
            s += by_thread[t];
#pragma omp critical
        sum += s;
#pragma omp barrier /* everyone has read by_thread before it is rewritten */
#pragma omp for schedule(dynamic, 1)
        for (int t = 0; t < 4; t++)
            by_thread[t] = t;
        /* implicit barrier of the loop (GOMP_loop_end) */
        long again = by_thread[(me + 1) % 4];
        (void)again;
    }
    /* join: the main thread reads what the team wrote */
    long want = 4 * (4 * 42 + 6);
    if (sum != want || by_thread[3] != 3) {
        fprintf(stderr, "gomp_selftest: wrong results %ld (want %ld)\n", sum, want);
        return 1;
    }
    return 0;
}

/* Many racing writes: TSan misses a lone pair of them now and then. */
static long racy[64];
__attribute__((noinline)) static void planted_race(int me)
{
    for (int i = 0; i < 100000; i++)
        racy[i % 64] += me;
}

static int race(void)
{
    int nthreads = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        nthreads = omp_get_num_threads();
        planted_race(omp_get_thread_num());
    }
    if (racy[0] == -1) /* keeps the writes */
        return 3;
    if (nthreads != 2) {
        fprintf(stderr, "gomp_selftest: team of %d threads, need 2\n", nthreads);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return clean();
    if (argc == 2 && !strcmp(argv[1], "race"))
        return race();
    fprintf(stderr, "usage: gomp_selftest [race]\n");
    return 2;
}
