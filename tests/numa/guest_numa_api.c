/* In-guest end-to-end check through the public API (include/paddiser.h) on
 * the QEMU two-node machine: PD_BACKEND_NUMA, one registered object shared
 * by two tasks with very different memory work, a sync point, and then the
 * kernel's own answer (move_pages query) must agree with the plan: each
 * task's planned fast-memory bytes are on node 0 inside the range it works
 * on, an untouched gap stays on node 1, and the total fits the capacity. */
#include <errno.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "paddiser.h"

#define MB (1024ul * 1024ul)
#define PAGE 4096ul

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            failures++;                                                                                                \
            printf("guest_numa_api: check failed (line %d): %s: ", __LINE__, #cond);                                  \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static void sweep(unsigned char *p, size_t len, int passes)
{
    for (int k = 0; k < passes; k++)
        for (size_t i = 0; i < len; i += 64)
            ((volatile unsigned char *)p)[i] += 1;
}

/* Pages of [p, p+len) on node, by the raw system call. */
static long pages_on_node(unsigned char *p, size_t len, int node)
{
    size_t n = len / PAGE;
    void **pages = malloc(n * sizeof *pages);
    int *status = malloc(n * sizeof *status);
    long on = -1;
    if (pages && status) {
        for (size_t i = 0; i < n; i++)
            pages[i] = p + i * PAGE;
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

int main(void)
{
    setenv("PADDISER_QUIET", "1", 1);
    size_t len = 16 * MB;
    unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        printf("guest_numa_api: mmap failed\nguest_numa_api: FAIL\n");
        return 1;
    }
    /* The runtime places 4 KB pages; a THP would move 2 MB at a time. */
    madvise(buf, len, MADV_NOHUGEPAGE);
    memset(buf, 0, len);

    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NUMA;
    o.fast_capacity = 6 * MB;
    o.planner = PD_PLANNER_GREEDY;
    int rc = pd_init(&o);
    CHECK(rc == PD_OK, "pd_init: %s", pd_strerror(rc));
    if (rc != PD_OK) {
        printf("guest_numa_api: FAIL\n");
        return 1;
    }
    pd_access_hint stream = {PD_PATTERN_STREAM, 1, 64, 0};
    int obj = pd_object_register("grid", buf, len, &stream);
    CHECK(obj >= 0, "register: %s", pd_strerror(obj));
    long slow0 = pages_on_node(buf, len, 1);
    printf("guest_numa_api: after register: %ld/%lu pages on node 1\n", slow0, len / PAGE);
    CHECK(slow0 == (long)(len / PAGE), "registered pages start on the slow node");

    /* Task 0: one pass over 2 MB; task 1: 12 passes over 12 MB. */
    pd_task_begin(0);
    sweep(buf, 2 * MB, 1);
    pd_task_end(0);
    for (int k = 0; k < 12; k++) {
        pd_task_begin(1);
        sweep(buf + 4 * MB, 12 * MB, 1);
        pd_task_end(1);
    }
    rc = pd_sync_point();
    CHECK(rc == PD_OK, "sync point: %s", pd_strerror(rc));

    pd_task_plan plan[4];
    double makespan = 0;
    int n = pd_plan_query(plan, 4, &makespan);
    CHECK(n == 2, "plan tasks %d", n);
    if (n == 2) {
        const pd_task_plan *t0 = plan[0].task == 0 ? &plan[0] : &plan[1];
        const pd_task_plan *t1 = plan[0].task == 1 ? &plan[0] : &plan[1];
        long f0 = pages_on_node(buf, 2 * MB, 0), fgap = pages_on_node(buf + 2 * MB, 2 * MB, 0);
        long f1 = pages_on_node(buf + 4 * MB, 12 * MB, 0);
        printf("guest_numa_api: plan: task0 share %.2f %zu B, task1 share %.2f %zu B, makespan %.6f s\n",
               t0->dram_share, t0->dram_bytes, t1->dram_share, t1->dram_bytes, makespan);
        printf("guest_numa_api: on node 0: task0 range %ld pages, gap %ld, task1 range %ld pages\n", f0, fgap, f1);
        CHECK(t1->dram_bytes > t0->dram_bytes, "skewed task gets more fast memory");
        CHECK(t0->dram_bytes + t1->dram_bytes <= 6 * MB, "capacity");
        CHECK((size_t)f0 * PAGE == t0->dram_bytes, "task 0: %ld pages on node 0 for %zu B planned", f0,
              t0->dram_bytes);
        CHECK((size_t)f1 * PAGE == t1->dram_bytes, "task 1: %ld pages on node 0 for %zu B planned", f1,
              t1->dram_bytes);
        CHECK(fgap == 0, "untouched gap on node 0: %ld pages", fgap);
    }
    pd_profile_info info;
    rc = pd_profile_info_get(&info);
    CHECK(rc == PD_OK, "profile info: %s", pd_strerror(rc));
    if (rc == PD_OK) {
        printf("guest_numa_api: runtime: backend %s, fast capacity %zu B, last migration moved %zu pages, "
               "failed %zu, model %s\n",
               info.backend, info.fast_capacity, info.pages_moved, info.pages_failed,
               info.model_loaded ? "loaded" : "linear");
        CHECK(!strcmp(info.backend, "numa"), "backend '%s' (%s)", info.backend, info.backend_note);
        CHECK(info.pages_failed == 0, "pages failed %zu", info.pages_failed);
        CHECK(info.pages_moved >= 6 * MB / PAGE, "pages moved %zu", info.pages_moved);
    }
    rc = pd_finalize();
    CHECK(rc == PD_OK, "finalize: %s", pd_strerror(rc));
    munmap(buf, len);
    printf("guest_numa_api: %s (%d failed checks)\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
