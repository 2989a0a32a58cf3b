/* libpaddiser with OpenMP: one task per thread, uneven work per thread.
 * Every thread owns a slice of one grid (registered with a stream hint) and
 * thread t sweeps its slice t+1 times, so the last thread is the straggler.
 * After the base instance the runtime plans fast memory so that the
 * straggler gets more of it; the simulated backend records the placement.
 *
 *   omp_example [instances] [MB per thread] [fast MB]
 * Environment: PADDISER_BACKEND, PADDISER_PLANNER, PADDISER_TASKS_CSV, ... */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"

#define MB (1024ul * 1024ul)

static int arg(int argc, char **argv, int i, int dflt)
{
    return argc > i ? atoi(argv[i]) : dflt;
}

int main(int argc, char **argv)
{
    int instances = arg(argc, argv, 1, 3);
    size_t part = (size_t)arg(argc, argv, 2, 8) * MB;
    size_t fast = (size_t)arg(argc, argv, 3, 12) * MB;
    int nthreads = 4;
    if (instances < 1 || part == 0) {
        fprintf(stderr, "usage: omp_example [instances>=1] [MB per thread>=1] [fast MB]\n");
        return 2;
    }
    double *grid = aligned_alloc(2 * MB, nthreads * part);
    if (!grid) {
        fprintf(stderr, "omp_example: out of memory\n");
        return 1;
    }
    memset(grid, 0, nthreads * part);

    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_SIM;
    opt.fast_capacity = fast;
    int rc = pd_init(&opt);
    if (rc != PD_OK) {
        fprintf(stderr, "omp_example: pd_init: %s\n", pd_strerror(rc));
        return 1;
    }
    pd_access_hint stream = {PD_PATTERN_STREAM, sizeof(double), 1, 0};
    int obj = pd_object_register("grid", grid, nthreads * part, &stream);
    if (obj < 0) {
        fprintf(stderr, "omp_example: register: %s\n", pd_strerror(obj));
        return 1;
    }
    size_t n = part / sizeof(double);
    for (int it = 0; it < instances; it++) {
#pragma omp parallel num_threads(nthreads)
        {
            int me = omp_get_thread_num();
            pd_task_begin(-1); /* task id = thread number */
            double *slice = grid + (size_t)me * n;
            for (int pass = 0; pass <= me; pass++)
                for (size_t i = 0; i < n; i++)
                    slice[i] = slice[i] * 0.5 + 1.0;
            pd_task_end(-1);
        } /* the barrier is the synchronisation point */
        rc = pd_sync_point();
        if (rc != PD_OK) {
            fprintf(stderr, "omp_example: sync: %s\n", pd_strerror(rc));
            return 1;
        }
        pd_task_plan plan[16];
        double makespan = 0;
        int nt = pd_plan_query(plan, 16, &makespan);
        printf("instance %d: predicted makespan %.6f s\n", it, makespan);
        for (int i = 0; i < nt && i < 16; i++) {
            pd_task_profile prof;
            pd_task_profile_get(plan[i].task, &prof);
            printf("  task %d: measured %.6f s, sampled accesses %.0f, next: dram share %.2f, %zu bytes, predicted %.6f s\n",
                   plan[i].task, prof.last_time, prof.accesses, plan[i].dram_share, plan[i].dram_bytes,
                   plan[i].predicted_time);
        }
    }
    pd_profile_info info;
    pd_profile_info_get(&info);
    printf("backend %s, %zu samples of %zu bytes, %llu sampled faults, counters: %s\n", info.backend, info.samples,
           info.region_bytes, info.sampled_faults, info.hw_counters ? "hardware" : info.counters_note);
    pd_finalize();
    free(grid);
    return 0;
}
