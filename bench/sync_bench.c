/* Sync-point cost against registered size (issue #11): 16 tasks, 16
 * objects, the simulated tier, sampling on. Each instance every task sweeps
 * the same 1 MiB of its own object, so the work and the plan's size stay the
 * same while the registered footprint grows; a sync point's cost should
 * follow what changes, not what is registered. Prints, per footprint, the
 * median and maximum pd_sync_point() wall time over the instances after the
 * first two (base profile, first plan), and the mean pages and bytes the
 * migrations moved. Timings: a benchmark, not a test.
 *   make bench-sync [SYNC_BENCH_ARGS="INSTANCES MIB..."]   (default 20 64 1024 4096) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "paddiser.h"

#define NTASKS 16
#define TOUCH (1u << 20) /* bytes each task sweeps per instance */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run(int instances, size_t mib)
{
    size_t per = mib * (1u << 20) / NTASKS;
    if (per < TOUCH)
        per = TOUCH;
    pd_options opt;
    pd_options_default(&opt);
    opt.backend = PD_BACKEND_SIM;
    opt.fast_capacity = NTASKS * TOUCH / 2; /* half of what the tasks touch */
    if (pd_init(&opt) != PD_OK)
        return -1;
    unsigned char *obj[NTASKS];
    int id[NTASKS];
    pd_access_hint h = {PD_PATTERN_STREAM, 8, 1, 0};
    for (int t = 0; t < NTASKS; t++) {
        char name[16];
        snprintf(name, sizeof name, "obj%d", t);
        /* untouched beyond the swept MiB: registered, never faulted in */
        obj[t] = aligned_alloc(4096, per);
        if (!obj[t])
            return -1;
        memset(obj[t], 0, TOUCH);
        if ((id[t] = pd_object_register(name, obj[t], per, &h)) < 0) {
            fprintf(stderr, "sync_bench: register: %s\n", pd_strerror(id[t]));
            return -1;
        }
    }
    double *sync = calloc((size_t)instances, sizeof *sync);
    double moved_pages = 0, moved_bytes = 0;
    int counted = 0;
    for (int i = 0; i < instances; i++) {
        for (int t = 0; t < NTASKS; t++) {
            pd_task_begin(t);
            /* task t does (t % 4 + 1) sweeps: unequal tasks, as in a real imbalance */
            for (int k = 0; k <= t % 4; k++)
                for (size_t b = 0; b < TOUCH; b += 64)
                    ((volatile unsigned char *)obj[t])[b] += 1;
            pd_task_end(t);
        }
        double t0 = pd_monotonic();
        pd_sync_point();
        sync[i] = pd_monotonic() - t0;
        pd_profile_info info;
        if (i >= 2 && pd_profile_info_get(&info) == PD_OK) {
            moved_pages += (double)info.pages_moved;
            moved_bytes += (double)info.bytes_moved;
            counted++;
        }
    }
    pd_task_plan plan[NTASKS];
    double makespan = 0;
    int np = pd_plan_query(plan, NTASKS, &makespan);
    size_t planned = 0;
    for (int t = 0; t < np; t++)
        planned += plan[t].dram_bytes;
    int n = instances - 2;
    qsort(sync + 2, (size_t)n, sizeof *sync, cmp_double);
    printf("%8zu MiB registered  %3d tasks  sync point median %7.3f ms  max %7.3f ms  "
           "plan %5zu KiB fast  per sync: %6.0f pages moved or kept, %6.0f KiB really moved\n",
           NTASKS * per >> 20, NTASKS, sync[2 + n / 2] * 1e3, sync[instances - 1] * 1e3, planned >> 10,
           counted ? moved_pages / counted : 0, counted ? moved_bytes / counted / 1024 : 0);
    for (int t = 0; t < NTASKS; t++) {
        pd_object_unregister(id[t]);
        free(obj[t]);
    }
    free(sync);
    pd_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    int instances = argc > 1 ? atoi(argv[1]) : 20;
    if (instances < 4) {
        fprintf(stderr, "usage: sync_bench [INSTANCES >= 4] [MIB ...]\n");
        return 2;
    }
    static const size_t defaults[] = {64, 1024, 4096};
    int nsizes = argc > 2 ? argc - 2 : 3;
    for (int s = 0; s < nsizes; s++) {
        size_t mib = argc > 2 ? strtoul(argv[2 + s], NULL, 10) : defaults[s];
        if (run(instances, mib) != 0)
            return 1;
    }
    return 0;
}
