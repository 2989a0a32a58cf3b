/* What one hooked MPI call costs under libpaddiser-preload-mpi.so (issue
 * #14): an ordinary MPI program (no paddiser in it) that times `calls`
 * calls of
 *   MPI_Barrier(MPI_COMM_WORLD)              a sync point (by default)
 *   MPI_Recv from MPI_PROC_NULL              excluded: leaves the task while it runs
 *   MPI_Wait(MPI_REQUEST_NULL)               excluded, and returns at once in MPI
 * each after touching 64 pages of a `mb` MiB array (the work of the task;
 * registered with the runtime when the preload provides it), and prints the least of 5 rounds in microseconds per call. Run it with and
 * without the preload (make bench-run-mpi): the difference is the layer's
 * cost per call. A timing, not a test.
 *
 *   mpirun -np 1 mpi_hook_cost [calls] [mb]      (default 500 16) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"

/* The array is registered as the allocation hooks register any allocation
 * of 1 MiB or more; without the preload the reference is NULL. */
#pragma weak pd_object_register

static double *a;
static size_t n;

static void work(int i)
{
    for (size_t k = 0; k < 64; k++)
        a[((size_t)i * 64 + k) * 512 % n] += 1.0; /* one double per 4 KiB page */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int calls = argc > 1 ? atoi(argv[1]) : 500;
    int mb = argc > 2 ? atoi(argv[2]) : 16;
    n = (size_t)(mb > 0 ? mb : 1) * 1024 * 1024 / sizeof *a;
    a = malloc(n * sizeof *a);
    if (!a || calls < 1) {
        fprintf(stderr, "mpi_hook_cost: bad arguments or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(a, 0, n * sizeof *a);
    int registered = pd_object_register && pd_object_register("mpi_hook_cost", a, n * sizeof *a, NULL) >= 0;
    /* Not a collective on MPI_COMM_SELF for the excluded call: with one rank
     * it is congruent to MPI_COMM_WORLD, hence a sync point. */
    const char *names[3] = {"MPI_Barrier(world)", "MPI_Recv(proc_null)", "MPI_Wait(null)"};
    double best[3] = {1e30, 1e30, 1e30}, base = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < calls; i++)
            work(i);
        double t = MPI_Wtime() - t0;
        base = t < base ? t : base;
        for (int c = 0; c < 3; c++) {
            t0 = MPI_Wtime();
            for (int i = 0; i < calls; i++) {
                work(i);
                double y = 0;
                MPI_Request r = MPI_REQUEST_NULL;
                if (c == 0)
                    MPI_Barrier(MPI_COMM_WORLD);
                else if (c == 1)
                    MPI_Recv(&y, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else
                    MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            t = MPI_Wtime() - t0;
            best[c] = t < best[c] ? t : best[c];
        }
    }
    if (rank == 0)
        printf("array of %d MiB %s\n", mb, registered ? "registered" : "not registered (no preload)");
    if (rank == 0)
        for (int c = 0; c < 3; c++)
            printf("%-20s %8.2f us per call (work alone %.2f us)\n", names[c], (best[c] - base) / calls * 1e6,
                   base / calls * 1e6);
    free(a);
    MPI_Finalize();
    return 0;
}
