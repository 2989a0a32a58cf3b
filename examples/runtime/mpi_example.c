/* libpaddiser with MPI: one task per rank (the default task id is the rank,
 * read from OMPI_COMM_WORLD_RANK / PMI_RANK / PMIX_RANK). Rank r works on
 * (r+1) x the data of rank 0, registered with the paper's LB_HM_config; the
 * ranks meet at MPI_Barrier, then each rank's runtime passes its sync point.
 * The ranks of one node plan its fast memory together: the runtime gets an
 * allgather over the node communicator (pd_set_allgather), so pd_sync_point
 * is collective and the slower rank gets more fast memory.
 * Communication happens outside the task instances: the page sampler only
 * protects pages while a task runs, so MPI copies never see them.
 *
 *   mpirun -np 2 mpi_example [instances] [MB for rank 0] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"

#define MB (1024ul * 1024ul)

static int node_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    MPI_Comm comm = *(MPI_Comm *)ctx;
    return MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, comm) == MPI_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int instances = argc > 1 ? atoi(argv[1]) : 2;
    int mb = argc > 2 ? atoi(argv[2]) : 4;
    if (instances < 1 || mb < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_example [instances>=1] [MB>=1]\n");
        MPI_Finalize();
        return 2;
    }
    size_t bytes = (size_t)(rank + 1) * (size_t)mb * MB;
    double *data = aligned_alloc(4096, bytes);
    if (!data) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(data, 0, bytes);
    void *objects[] = {data, NULL};
    int sizes[] = {(int)bytes};
    if (!LB_HM_config(objects, sizes)) { /* also initialises the runtime */
        fprintf(stderr, "rank %d: LB_HM_config failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm node;
    int node_size = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    int rc = pd_set_allgather(node_allgather, &node, node_size);
    if (rc != PD_OK) {
        fprintf(stderr, "rank %d: pd_set_allgather: %s\n", rank, pd_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t n = bytes / sizeof(double);
    double local = 0, global = 0;
    for (int it = 0; it < instances; it++) {
        if (pd_task_begin(-1) != PD_OK) { /* task id = MPI rank */
            fprintf(stderr, "rank %d: pd_task_begin failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int pass = 0; pass <= rank; pass++) /* rank r: (r+1)^2 x the work of rank 0 */
            for (size_t i = 0; i < n; i++)
                data[i] += 1.0;
        pd_task_end(-1);
        MPI_Barrier(MPI_COMM_WORLD);
        pd_sync_point(); /* collective over the node */
        /* MPI reads the registered buffer between instances: fine. */
        MPI_Allreduce(data, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        local = data[0];
    }
    pd_task_plan plan[4];
    double makespan = 0;
    int nt = pd_plan_query(plan, 4, &makespan);
    pd_task_profile prof;
    for (int i = 0; i < nt && i < 4; i++) {
        pd_task_profile_get(plan[i].task, &prof);
        printf("rank %d of %d: task %d, measured %.6f s, sampled accesses %.0f, planned dram share %.2f, "
               "%zu bytes, joint makespan %.9g s\n",
               rank, size, plan[i].task, prof.last_time, prof.accesses, plan[i].dram_share, plan[i].dram_bytes,
               makespan);
    }
    if (rank == 0)
        printf("allreduce of first elements: %.1f (expected %.1f)\n", global,
               local * (double)size * (size + 1) / 2); /* rank r adds r+1 per instance */
    pd_set_allgather(NULL, NULL, 0);
    MPI_Comm_free(&node);
    fflush(stdout);
    pd_finalize();
    free(data);
    MPI_Finalize();
    return 0;
}
