/* An OpenMP program that knows nothing of paddiser, for `paddiser run` in
 * the two-node guest (scripts/numa-qemu.sh, tests/numa/init): two arrays of
 * 24 MiB, one per thread, and thread 1 sweeps its array three times as
 * often as thread 0, so a load-balanced plan gives thread 1's array the
 * fast memory. 12 instances of one parallel region. Prints a checksum; the
 * preload library (LD_PRELOAD) finds the region's tasks and the arrays
 * (malloc above its threshold) by itself. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N ((size_t)24 << 20 >> 3) /* doubles per array */

int main(void)
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
    free(a[0]);
    free(a[1]);
    return 0;
}
