/* Planning across processes (pd_set_allgather), with a fake allgather that
 * plays a second process: it returns this process's block plus a copy whose
 * task is 4x slower. The joint plan must then give the remote task most of
 * the shared capacity, and this process's task less than alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)

static double fake_now;
static double fake_clock(void) { return fake_now; }

static int calls, fail_next;
static rt_xchg remote;

static int fake_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    assert_ptr_equal(ctx, &calls);
    assert_int_equal(bytes, sizeof(rt_xchg));
    calls++;
    if (fail_next)
        return -1;
    const rt_xchg *mine = send;
    remote = *mine;
    remote.nonce = mine->nonce + 1;
    for (int i = 0; i < remote.ntasks; i++) {
        remote.task[i].id = 100 + mine->task[i].id;
        for (int k = 0; k <= RT_GRID; k++)
            remote.task[i].t[k] *= 4;
    }
    memcpy(recv, &remote, sizeof remote);                    /* process 0: the remote */
    memcpy((char *)recv + sizeof remote, mine, sizeof *mine); /* process 1: us */
    return 0;
}

static void run_task(unsigned char *buf)
{
    assert_int_equal(pd_task_begin(0), PD_OK);
    for (size_t i = 0; i < 4 * MB; i += 4096)
        buf[i]++;
    fake_now += 0.010;
    assert_int_equal(pd_task_end(0), PD_OK);
}

static void test_joint_plan(void **state)
{
    (void)state;
    pd_perf_set_clock(fake_clock);
    unsigned char *buf = aligned_alloc(2 * MB, 4 * MB);
    assert_non_null(buf);
    memset(buf, 0, 4 * MB);
    assert_int_equal(pd_set_allgather(fake_allgather, &calls, 2), PD_ESTATE); /* before init */
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 4 * MB;
    assert_int_equal(pd_init(&o), PD_OK);
    assert_int_equal(pd_set_allgather(fake_allgather, &calls, 0), PD_EINVAL);
    assert_int_equal(pd_set_allgather(fake_allgather, &calls, 2), PD_OK);
    int obj = pd_object_register("b", buf, 4 * MB, NULL);
    assert_true(obj >= 0);

    calls = 0;
    run_task(buf);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(calls, 1);
    pd_task_plan plan[2];
    double makespan;
    assert_int_equal(pd_plan_query(plan, 2, &makespan), 1); /* our task only */
    assert_int_equal(plan[0].task, 0);
    /* The remote task is slower at every share: it gets the capacity first. */
    assert_true(plan[0].dram_share < 1.0);
    assert_true(makespan > plan[0].predicted_time);
    assert_true(plan[0].dram_bytes <= 4 * MB);
    pd_profile_info info;
    pd_profile_info_get(&info);
    assert_int_equal(info.fast_capacity, 4 * MB);

    /* Between sync points the joint plan stays (no collective call). */
    assert_int_equal(pd_object_update(obj, buf, 2 * MB), PD_OK);
    pd_task_plan again[2];
    assert_int_equal(pd_plan_query(again, 2, NULL), 1);
    assert_int_equal(calls, 1);
    assert_true(again[0].dram_share == plan[0].dram_share);
    assert_int_equal(pd_object_update(obj, buf, 4 * MB), PD_OK);

    /* A failed exchange: this process plans alone and keeps all of it. */
    fail_next = 1;
    run_task(buf);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(calls, 2);
    assert_int_equal(pd_plan_query(plan, 2, NULL), 1);
    assert_true(plan[0].dram_share == 1.0);
    fail_next = 0;

    /* Back to planning alone. */
    assert_int_equal(pd_set_allgather(NULL, NULL, 0), PD_OK);
    run_task(buf);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(calls, 2);
    assert_int_equal(pd_finalize(), PD_OK);
    pd_perf_set_clock(NULL);
    free(buf);
}

static int teardown(void **state)
{
    (void)state;
    pd_perf_set_clock(NULL);
    pd_finalize();
    return 0;
}

int main(void)
{
    /* Where a plan's pages go, not whether a plan pays for its moves
     * (test_runtime_migrate_rule.c): every plan that gains at all is
     * applied, whatever the sampled heat of a slow (sanitised) run. */
    setenv("PADDISER_MIGRATE_BW", "1e15", 1);
    setenv("PADDISER_MIN_GAIN", "0", 1);
    /* m fixed: fake or emulated times do not depend on the share, and a
     * learned m near 0 would flatten every curve (test_runtime_mem_bound.c) */
    setenv("PADDISER_MEM_BOUND", "0.5", 1);
    setenv("PADDISER_QUIET", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_joint_plan, teardown),
    };
    return cmocka_run_group_tests_name("runtime_xchg", tests, NULL, NULL);
}
