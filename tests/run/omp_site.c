/* docs/runtime.md, "paddiser run: allocations and options": every thread
 * of a parallel region allocates a 2 MiB block at one site, for three
 * inputs. Under paddiser run -v the blocks are that site's #0..#3 in the
 * order the threads get there, which changes between inputs (and runs);
 * built with clang, libomp's own large allocation is an object too. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    double total = 0;
    for (int input = 0; input < 3; input++) {
#pragma omp parallel reduction(+ : total)
        {
            size_t n = 1u << 18;
            double *a = malloc(n * sizeof *a);
            if (a) {
                for (size_t i = 0; i < n; i++)
                    a[i] = (double)(i % 7);
                for (size_t i = 0; i < n; i++)
                    total += a[i];
            }
            free(a);
        }
    }
    printf("%.0f\n", total);
    return 0;
}
