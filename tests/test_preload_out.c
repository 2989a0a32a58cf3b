/* paddiser run's exit outputs (src/preload/preload_out.c, issue #14),
 * linked here without the hooks: with PADDISER_RUN_OUT=DIR, pdp_out_setup
 * points the runtime's per-task CSV at DIR/tasks.csv, pdp_after_sync
 * appends one line per sync point to DIR/plan.log (pid, instance, tasks,
 * predicted makespan, moved bytes, the hot-first decision, backend, the
 * measured makespan of the instance that ended), and
 * pdp_out_finish writes DIR/objects.csv with the objects the hooks
 * registered. Without PADDISER_RUN_OUT nothing is written. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "paddiser.h"
#include "preload/preload.h"

/* What preload_main.c gives the output module. */
__thread int pdp_busy __attribute__((tls_model("initial-exec")));
void pdp_log(int level, const char *fmt, ...)
{
    (void)level;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static char *slurp(const char *dir, const char *name)
{
    char path[4096];
    assert_int_equal(pd_path_join(path, sizeof path, dir, name), 0);
    size_t len;
    return pd_read_file(path, &len);
}

/* Tasks 0 .. ntasks-1 in turn, task k touching every cache line of the
 * buffer 200 k + 1 times: task 1 takes milliseconds, so that a preemption
 * of task 0 cannot make task 0 the slower. */
static void one_instance(unsigned char *buf, size_t len, int ntasks)
{
    for (int k = 0; k < ntasks; k++) {
        assert_int_equal(pd_task_begin(k), PD_OK);
        for (int r = 0; r <= 200 * k; r++)
            for (size_t i = 0; i < len; i += 64)
                ((volatile unsigned char *)buf)[i]++;
        assert_int_equal(pd_task_end(k), PD_OK);
    }
    assert_int_equal(pd_sync_point(), PD_OK);
    pdp_after_sync();
}

static double last_time(int task)
{
    pd_task_profile p;
    assert_int_equal(pd_task_profile_get(task, &p), PD_OK);
    return p.last_time;
}

/* measured_s=... of the line that begins with prefix. */
static double measured_on(const char *log, const char *prefix)
{
    const char *line = strstr(log, prefix);
    assert_non_null(line);
    const char *eol = strchr(line, '\n'), *m = strstr(line, " measured_s=");
    assert_true(m && eol && m < eol);
    return strtod(m + strlen(" measured_s="), NULL);
}

static void test_outputs(void **state)
{
    (void)state;
    char dir[] = "/tmp/paddiser-run-out-XXXXXX";
    assert_non_null(mkdtemp(dir));
    unsetenv("PADDISER_TASKS_CSV");
    setenv("PADDISER_RUN_OUT", dir, 1);
    setenv("PADDISER_QUIET", "1", 1);
    pdp_out_setup();
    char want_csv[4200];
    snprintf(want_csv, sizeof want_csv, "%s/tasks.csv", dir);
    assert_string_equal(getenv("PADDISER_TASKS_CSV"), want_csv);

    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 1u << 20;
    assert_int_equal(pd_init(&o), PD_OK);
    size_t len = 4u << 20;
    unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(buf != MAP_FAILED);
    memset(buf, 0, len);
    int id = pd_object_register("app+0x10#0", buf, len, NULL);
    assert_true(id >= 0);
    pdp_out_object(id, "app+0x10#0", len);
    /* the second instance runs task 0 alone: task 1's time is the first
     * instance's and is not measured in the second */
    one_instance(buf, len, 2);
    double first0 = last_time(0), first1 = last_time(1);
    one_instance(buf, len, 1);
    double second0 = last_time(0), second1 = last_time(1);
    pdp_out_finish();
    assert_int_equal(pd_finalize(), PD_OK);

    char *plan = slurp(dir, "plan.log");
    assert_non_null(plan);
    char first[64], second[64];
    snprintf(first, sizeof first, "pid=%ld instance=1 tasks=", (long)getpid());
    snprintf(second, sizeof second, "pid=%ld instance=2 tasks=2 makespan_s=", (long)getpid());
    assert_non_null(strstr(plan, first));
    assert_non_null(strstr(plan, second));
    /* the slowest task of each instance, as printed (%.6g) */
    assert_true(second1 == first1);
    /* task 1 did 201 times the work: counting its old time would show */
    assert_true(first0 > 0 && second0 > 0 && first1 > second0);
    assert_float_equal(measured_on(plan, first), fmax(first0, first1), 1e-5 * fmax(first0, first1));
    assert_float_equal(measured_on(plan, second), second0, 1e-5 * second0);
    assert_non_null(strstr(plan, " moved_bytes="));
    assert_non_null(strstr(plan, " hot_first="));
    assert_non_null(strstr(plan, " backend=sim sampler="));
    assert_non_null(strstr(plan, " instances_sampled=1 sampling_cost_s=")); /* the first instance only */
    int lines = 0;
    for (const char *p = plan; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 2);
    free(plan);

    char *objects = slurp(dir, "objects.csv");
    assert_non_null(objects);
    char row[128];
    snprintf(row, sizeof row, "pid,object,name,bytes,registrations,accesses\n%ld,%d,app+0x10#0,%zu,1,", (long)getpid(),
             id, len);
    assert_true(strncmp(objects, row, strlen(row)) == 0);
    free(objects);

    char *tasks = slurp(dir, "tasks.csv");
    assert_non_null(tasks);
    assert_true(strncmp(tasks, "policy,task,time_s,dram_share,dram_bytes\n", 41) == 0);
    free(tasks);
    munmap(buf, len);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_outputs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
