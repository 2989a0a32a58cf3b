/* Tests of the public runtime API (include/paddiser.h): argument and order
 * errors, LB_HM_config, concurrent task instances from OpenMP threads with
 * per-task page-sample attribution, and profile queries.
 * The runtime is initialised inside each test body: cmocka swaps its own
 * SIGSEGV handler around every body, and the sampler must sit on top. */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <cmocka.h>

#include "lib/page_sampler.h"
#include "lib/perf.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

/* What the registry holds for an object (white-box: sizes past 2 GiB). */
static size_t rt_object_size(int id) { return rt.objects[id].size; }
static void *rt_first_object_addr(int id) { return rt.objects[id].addr; }

#define MB (1024ul * 1024ul)

static int teardown(void **state)
{
    (void)state;
    pd_finalize(); /* after a failed assertion */
    return 0;
}

static void init_none(int sampling)
{
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_NONE;
    o.sampling = sampling;
    assert_int_equal(pd_init(&o), PD_OK);
}

static void test_order_errors_before_init(void **state)
{
    (void)state;
    char buf[64];
    pd_task_plan plan[2];
    pd_profile_info info;
    assert_int_equal(pd_object_register("x", buf, sizeof buf, NULL), PD_ESTATE);
    assert_int_equal(pd_object_update(0, buf, sizeof buf), PD_ESTATE);
    assert_int_equal(pd_object_unregister(0), PD_ESTATE);
    assert_int_equal(pd_task_begin(0), PD_ESTATE);
    assert_int_equal(pd_task_end(0), PD_ESTATE);
    assert_int_equal(pd_sync_point(), PD_ESTATE);
    assert_int_equal(pd_plan_query(plan, 2, NULL), PD_ESTATE);
    assert_int_equal(pd_finalize(), PD_ESTATE);
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.initialized, 0);
}

static void test_init_twice_and_bad_options(void **state)
{
    (void)state;
    pd_options o;
    pd_options_default(&o);
    o.backend = (pd_backend_kind)42;
    assert_int_equal(pd_init(&o), PD_EINVAL);
    pd_options_default(&o);
    o.sampling = 7;
    assert_int_equal(pd_init(&o), PD_EINVAL);
    pd_options_default(&o);
    o.model_path = "/nonexistent/model.json";
    assert_int_equal(pd_init(&o), PD_EIO); /* an explicit model must load */
    pd_profile_info info;
    pd_profile_info_get(&info);
    assert_int_equal(info.initialized, 0);
    init_none(1);
    pd_profile_info_get(&info);
    assert_int_equal(info.model_loaded, 1); /* the shipped default */
    assert_int_equal(pd_init(NULL), PD_ESTATE);
    assert_int_equal(pd_finalize(), PD_OK);
    assert_int_equal(pd_finalize(), PD_ESTATE);
}

static void test_object_errors(void **state)
{
    (void)state;
    static char buf[3 * 4096];
    init_none(0);
    pd_access_hint bad = {(pd_pattern)99, 8, 1, 0};
    pd_access_hint good = {PD_PATTERN_STRIDE, 8, 4, 0};
    assert_int_equal(pd_object_register("a", NULL, 10, NULL), PD_EINVAL);
    assert_int_equal(pd_object_register("a", buf, 0, NULL), PD_EINVAL);
    assert_int_equal(pd_object_register("a", buf, 10, &bad), PD_EINVAL);
    assert_int_equal(pd_object_register("a", (void *)UINTPTR_MAX, 10, NULL), PD_EINVAL); /* wraps */
    int a = pd_object_register("a", buf, 4096, &good);
    assert_int_equal(a, 0);
    assert_int_equal(pd_object_register("b", buf + 100, 10, NULL), PD_EINVAL); /* overlaps a */
    int b = pd_object_register(NULL, buf + 4096, 4096, NULL);
    assert_int_equal(b, 1);
    assert_int_equal(pd_object_update(b, buf, 8192), PD_EINVAL); /* would overlap a */
    assert_int_equal(pd_object_update(b, buf + 4096, 8192), PD_OK);
    assert_int_equal(pd_object_update(7, buf, 10), PD_ENOTFOUND);
    assert_int_equal(pd_object_update(-1, buf, 10), PD_ENOTFOUND);
    assert_int_equal(pd_object_update(a, buf, 0), PD_EINVAL);
    assert_int_equal(pd_object_unregister(9), PD_ENOTFOUND);
    assert_int_equal(pd_object_unregister(a), PD_OK);
    assert_int_equal(pd_object_unregister(a), PD_ENOTFOUND);
    double acc;
    assert_int_equal(pd_object_accesses(a, -1, &acc), PD_ENOTFOUND);
    assert_int_equal(pd_object_accesses(b, -1, NULL), PD_EINVAL);
    assert_int_equal(pd_finalize(), PD_OK);
}

/* Ranges that are not the application's writable memory are refused with
 * PD_EINVAL, at once: unmapped, past the end of the mapping (a 4 KiB block
 * with SIZE_MAX / 2 bytes used to hang the sim backend), code, read-only
 * data. pd_object_update checks the new range alike. */
static void test_object_bad_ranges(void **state)
{
    (void)state;
    long pg = sysconf(_SC_PAGESIZE);
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = 1 << 20;
    assert_int_equal(pd_init(&o), PD_OK);
    /* An address below vm.mmap_min_addr is never mapped. (A range freshly
     * munmap()ed is not a reliable "unmapped": under ASan the allocator
     * reused it before the check ran.) */
    char *gone = (char *)(uintptr_t)pg;
    assert_int_equal(pd_object_register("unmapped", gone, 4 * (size_t)pg, NULL), PD_EINVAL);
    char *small = malloc(4096);
    assert_non_null(small);
    assert_int_equal(pd_object_register("past-end", small, SIZE_MAX / 2, NULL), PD_EINVAL);
    assert_int_equal(pd_object_register("code", (void *)(uintptr_t)&test_object_bad_ranges, 4096, NULL), PD_EINVAL);
    char *ro = mmap(NULL, 2 * (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(ro != MAP_FAILED);
    assert_int_equal(pd_object_register("read-only", ro, 2 * (size_t)pg, NULL), PD_EINVAL);
    /* a mapping with a hole in the middle */
    char *holey = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(holey != MAP_FAILED);
    assert_int_equal(munmap(holey + pg, (size_t)pg), 0);
    assert_int_equal(pd_object_register("holey", holey, 3 * (size_t)pg, NULL), PD_EINVAL);
    /* the real thing is accepted, and an update to a bad range is refused */
    int id = pd_object_register("ok", small, 4096, NULL);
    assert_true(id >= 0);
    assert_int_equal(pd_object_update(id, small, SIZE_MAX / 2), PD_EINVAL);
    assert_int_equal(pd_object_update(id, ro, 2 * (size_t)pg), PD_EINVAL);
    assert_int_equal(pd_object_update(id, small, 4096), PD_OK);
    assert_int_equal(pd_object_unregister(id), PD_OK);
    assert_int_equal(pd_finalize(), PD_OK);
    munmap(ro, 2 * (size_t)pg);
    munmap(holey, (size_t)pg);
    munmap(holey + 2 * pg, (size_t)pg);
    free(small);
}

static void test_task_errors(void **state)
{
    (void)state;
    init_none(0);
    pd_task_plan plan[1];
    assert_int_equal(pd_sync_point(), PD_ESTATE); /* no task ran */
    assert_int_equal(pd_task_end(3), PD_ENOTFOUND);
    assert_int_equal(pd_task_begin(3), PD_OK);
    assert_int_equal(pd_task_begin(3), PD_ESTATE);
    assert_int_equal(pd_sync_point(), PD_ESTATE); /* task 3 still running */
    assert_int_equal(pd_task_end(3), PD_OK);
    assert_int_equal(pd_task_end(3), PD_ESTATE);
    assert_int_equal(pd_plan_query(NULL, 1, NULL), PD_EINVAL);
    assert_int_equal(pd_plan_query(plan, -1, NULL), PD_EINVAL);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(pd_sync_point(), PD_ESTATE); /* nothing ran since */
    pd_task_profile tp;
    assert_int_equal(pd_task_profile_get(3, &tp), PD_OK);
    assert_int_equal(tp.instances, 1);
    assert_int_equal(pd_task_profile_get(4, &tp), PD_ENOTFOUND);
    assert_int_equal(pd_task_profile_get(3, NULL), PD_EINVAL);
    /* Finalize with a running task: reported, still cleaned up. */
    assert_int_equal(pd_task_begin(3), PD_OK);
    assert_int_equal(pd_finalize(), PD_ESTATE);
    assert_int_equal(pd_init(NULL), PD_OK);
    assert_int_equal(pd_finalize(), PD_OK);
}

/* rt_task_end_waited (paddiser run's barrier pauses, which make no runtime
 * call at the barrier): the waited seconds leave the task's time, which
 * never goes below 0; with none waited, the task's whole span counts. */
static void test_task_end_leaves_waits_out(void **state)
{
    (void)state;
    init_none(0);
    struct timespec ts = {0, 20000000L};
    assert_int_equal(pd_task_begin(1), PD_OK);
    assert_int_equal(pd_task_begin(2), PD_OK);
    nanosleep(&ts, NULL);
    assert_int_equal(rt_task_end_waited(1, 0.0), PD_OK);
    assert_int_equal(rt_task_end_waited(2, 1000.0), PD_OK); /* waited longer than it ran */
    assert_int_equal(rt_task_end_waited(2, 0.0), PD_ESTATE); /* as pd_task_end: not running */
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_task_profile tp;
    assert_int_equal(pd_task_profile_get(1, &tp), PD_OK);
    assert_true(tp.last_time >= 0.02);
    assert_int_equal(pd_task_profile_get(2, &tp), PD_OK);
    assert_float_equal(tp.last_time, 0.0, 0.0);
}

/* pd_task_pause / pd_task_resume: the time between them leaves the task's
 * time (a pause still open at the end counts up to the end), and pausing a
 * task that does not run, twice, or resuming one that is not paused is an
 * order error. Task durations come from a fake clock. */
static double fake_now;
static double fake_clock(void) { return fake_now; }

static void test_task_pause_leaves_its_wait_out(void **state)
{
    (void)state;
    pd_perf_set_clock(fake_clock);
    init_none(0);
    assert_int_equal(pd_task_pause(1), PD_ENOTFOUND);
    assert_int_equal(pd_task_begin(1), PD_OK);
    fake_now += 0.010;
    assert_int_equal(pd_task_resume(1), PD_ESTATE); /* not paused */
    assert_int_equal(pd_task_pause(1), PD_OK);
    assert_int_equal(pd_task_pause(1), PD_ESTATE); /* paused already */
    fake_now += 0.005;
    assert_int_equal(pd_task_resume(1), PD_OK);
    fake_now += 0.010;
    assert_int_equal(pd_task_pause(1), PD_OK);
    fake_now += 0.007; /* ended while paused: the end is at the pause */
    assert_int_equal(pd_task_end(1), PD_OK);
    assert_int_equal(pd_task_pause(1), PD_ESTATE); /* not running */
    assert_int_equal(pd_task_resume(1), PD_ESTATE);
    /* a second begin in the instance starts with no pause */
    assert_int_equal(pd_task_begin(1), PD_OK);
    fake_now += 0.004;
    assert_int_equal(pd_task_end(1), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_task_profile tp;
    assert_int_equal(pd_task_profile_get(1, &tp), PD_OK);
    assert_float_equal(tp.last_time, 0.024, 1e-9);
    pd_finalize();
    pd_perf_set_clock(NULL);
}

/* A pause is no end: with one task running, its end stops the page
 * sampler and its next begin starts a new spell of activity that arms
 * every sample again, while its pause leaves the samples armed. */
static void test_task_pause_keeps_sampling(void **state)
{
    (void)state;
    setenv("PADDISER_SAMPLE_PERIOD_MS", "0", 1); /* no tick: the passes counted are the task calls' */
    init_none(1);
    unsetenv("PADDISER_SAMPLE_PERIOD_MS");
    unsigned char *buf = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(buf != MAP_FAILED);
    memset(buf, 1, 4 * MB);
    assert_true(pd_object_register("buf", buf, 4 * MB, NULL) >= 0);
    pd_sampler_stats before, after;
    assert_int_equal(pd_task_begin(0), PD_OK);
    assert_true(pd_sampler_armed());
    pd_sampler_get_stats(&before);
    assert_int_equal(pd_task_pause(0), PD_OK);
    assert_true(pd_sampler_armed());
    assert_int_equal(pd_task_resume(0), PD_OK);
    pd_sampler_get_stats(&after);
    assert_int_equal(after.passes, before.passes); /* nothing armed again */
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_false(pd_sampler_armed());
    assert_int_equal(pd_task_begin(0), PD_OK); /* an end and a begin: a new spell */
    pd_sampler_get_stats(&after);
    assert_int_equal(after.passes, before.passes + 1);
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_finalize();
    munmap(buf, 4 * MB);
}

static void test_strerror(void **state)
{
    (void)state;
    const int codes[] = {PD_OK, PD_EINVAL, PD_ENOMEM, PD_ESTATE, PD_ENOTFOUND, PD_EUNSUPPORTED, PD_EIO};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        assert_true(strlen(pd_strerror(codes[i])) > 0);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(pd_strerror(codes[i]), pd_strerror(codes[j]));
    }
    assert_string_equal(pd_strerror(-1000), "unknown paddiser status code");
}

static void test_lb_hm_config(void **state)
{
    (void)state;
    static char a[8192], b[4096], c[100];
    void *objs[] = {a, b, c, NULL};
    int sizes[] = {8192, 4096, 100};
    int bad_sizes[] = {8192, 0, 100};
    errno = 0;
    assert_null(LB_HM_config(NULL, sizes));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(LB_HM_config(objs, NULL));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(LB_HM_config(objs, bad_sizes));
    assert_int_equal(errno, EINVAL);

    /* Initialises the runtime itself (paper API), registers all three. */
    assert_ptr_equal(LB_HM_config(objs, sizes), objs);
    pd_profile_info info;
    pd_profile_info_get(&info);
    assert_int_equal(info.initialized, 1);
    double acc;
    for (int id = 0; id < 3; id++)
        assert_int_equal(pd_object_accesses(id, -1, &acc), PD_OK);
    assert_int_equal(pd_object_accesses(3, -1, &acc), PD_ENOTFOUND);
    /* Again with new sizes: same objects updated, nothing new registered. */
    int smaller[] = {4096, 2048, 50};
    assert_ptr_equal(LB_HM_config(objs, smaller), objs);
    assert_int_equal(pd_object_accesses(3, -1, &acc), PD_ENOTFOUND);
    /* Empty list is fine. */
    void *none[] = {NULL};
    assert_ptr_equal(LB_HM_config(none, sizes), none);
    assert_int_equal(pd_finalize(), PD_OK);
}

static double sweep_as_task(int task, volatile char *p, size_t n)
{
    double sum = 0;
    assert_int_equal(pd_task_begin(task), PD_OK);
    for (int pass = 0; pass < 20; pass++)
        for (size_t i = 0; i < n; i += 64)
            sum += p[i]++;
    assert_int_equal(pd_task_end(task), PD_OK);
    return sum;
}

/* Reallocation, the common case: the next input's arrays are new blocks.
 * Typed API: unregister, free, allocate, register under the same name: the
 * same id comes back with its history (the accesses profiled so far).
 * Paper API: LB_HM_config with new pointers is the same objects (by
 * position), also when object 0's new block is object 1's old one; that
 * used to fail with EINVAL (the update overlapped object 1's stale range). */
static void test_reallocation_keeps_objects(void **state)
{
    (void)state;
    const size_t n = 1 << 20;
    init_none(1);
    char *a = aligned_alloc(4096, n);
    assert_non_null(a);
    memset(a, 1, n);
    int id = pd_object_register("grid", a, n, NULL);
    assert_true(id >= 0);
    int other = pd_object_register("other", aligned_alloc(4096, 4096), 4096, NULL);
    assert_true(other >= 0);
    sweep_as_task(0, a, n);
    assert_int_equal(pd_sync_point(), PD_OK);
    double before;
    assert_int_equal(pd_object_accesses(id, -1, &before), PD_OK);
    assert_true(before > 0);
    assert_int_equal(pd_object_unregister(id), PD_OK);
    free(a);
    char *a2 = aligned_alloc(4096, 2 * n);
    assert_non_null(a2);
    memset(a2, 1, 2 * n);
    assert_int_equal(pd_object_register("grid", a2, 2 * n, NULL), id);
    double after;
    assert_int_equal(pd_object_accesses(id, -1, &after), PD_OK);
    assert_true(after == before); /* nothing forgotten */
    sweep_as_task(0, a2, 2 * n);
    assert_int_equal(pd_sync_point(), PD_OK);
    assert_int_equal(pd_object_unregister(id), PD_OK);
    void *o = rt_first_object_addr(other);
    assert_int_equal(pd_object_unregister(other), PD_OK);
    free(o);
    free(a2);
    assert_int_equal(pd_finalize(), PD_OK);

    /* Paper API: object 0 moves into object 1's old block. */
    static char blk[3][16384] __attribute__((aligned(4096)));
    void *objs[] = {blk[0], blk[1], NULL};
    int sizes[] = {16384, 16384};
    assert_ptr_equal(LB_HM_config(objs, sizes), objs);
    void *next[] = {blk[1], blk[2], NULL};
    assert_ptr_equal(LB_HM_config(next, sizes), next);
    double acc;
    assert_int_equal(pd_object_accesses(2, -1, &acc), PD_ENOTFOUND); /* still two objects */
    /* overlapping new ranges are refused, and leave the registry as it was */
    void *clash[] = {blk[0], blk[0] + 4096, NULL};
    errno = 0;
    assert_null(LB_HM_config(clash, sizes));
    assert_int_equal(errno, EINVAL);
    assert_ptr_equal(LB_HM_config(next, sizes), next);
    assert_int_equal(pd_finalize(), PD_OK);
}

/* LB_HM_config_sizes: size_t sizes, for objects past what an int holds
 * (3 GiB of reserved, never touched address space). */
static void test_lb_hm_config_sizes_past_2gib(void **state)
{
    (void)state;
    size_t big = 3ul << 30;
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(p != MAP_FAILED);
    init_none(0);
    void *objs[] = {p, NULL};
    size_t sizes[] = {big};
    size_t zero[] = {0};
    errno = 0;
    assert_null(LB_HM_config_sizes(objs, zero));
    assert_int_equal(errno, EINVAL);
    assert_ptr_equal(LB_HM_config_sizes(objs, sizes), objs);
    assert_int_equal(rt_object_size(0), big);
    assert_int_equal(pd_finalize(), PD_OK);
    munmap(p, big);
}

/* The child of test_lb_hm_config_finalizes_at_exit: forked, not re-executed
 * (the model is evaluated natively, so loading it after fork is safe), with
 * alarm() so that a hang fails instead of blocking. */
static void lbhm_child(const char *path)
{
    static char a[8192];
    void *objs[] = {a, NULL};
    int sizes[] = {sizeof a};
    alarm(30);
    setenv("PADDISER_TASKS_CSV", path, 1);
    if (!LB_HM_config(objs, sizes) || pd_task_begin(5) != PD_OK || pd_task_end(5) != PD_OK)
        _exit(3);
    exit(0); /* no pd_finalize, no sync point: the exit handler finalizes */
}

/* Paper-API programs never call pd_finalize: the runtime finalizes at exit,
 * so the per-task CSV is still written. */
static void test_lb_hm_config_finalizes_at_exit(void **state)
{
    (void)state;
    /* in a private directory: the child's runtime creates the CSV */
    char dir[] = "/tmp/paddiser_lbhm_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/tasks.csv", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        lbhm_child(path);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("child killed by signal %d%s", WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (hung)" : "");
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "policy,task,time_s,dram_share,dram_bytes\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_true(strncmp(line, "exact,5,", 8) == 0);
    fclose(f);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_concurrent_tasks_openmp(void **state)
{
    (void)state;
    const int nthreads = 4;
    const size_t part = 4 * MB; /* 1024 pages per thread */
    unsigned char *buf = aligned_alloc(2 * MB, nthreads * part);
    assert_non_null(buf);
    memset(buf, 0, nthreads * part);
    init_none(1);
    int obj = pd_object_register("parts", buf, nthreads * part, NULL);
    assert_true(obj >= 0);
    int errors = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : errors)
    {
        int me = omp_get_thread_num();
        for (int rep = 0; rep < 20; rep++) {
            if (pd_task_begin(-1) != PD_OK) /* default id: the thread number */
                errors++;
            volatile unsigned char *p = buf + (size_t)me * part;
            for (size_t i = 0; i < part; i += 4096)
                p[i]++;
            if (pd_task_end(-1) != PD_OK)
                errors++;
        }
    }
    assert_int_equal(errors, 0);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.instances, 1);
    assert_int_equal(info.sampling, 1);
    /* at least PD_SAMPLE_MIN_PER_OBJECT samples, one per 2 MB region when more */
    assert_int_equal(info.samples, nthreads * 2 > PD_SAMPLE_MIN_PER_OBJECT ? nthreads * 2 : PD_SAMPLE_MIN_PER_OBJECT);
    assert_int_equal(info.region_bytes, 2 * MB);
    assert_true(info.sampled_faults >= (unsigned long long)nthreads * 2);
    assert_string_equal(info.backend, "none");
    double total = 0;
    for (int t = 0; t < nthreads; t++) {
        pd_task_profile tp;
        assert_int_equal(pd_task_profile_get(t, &tp), PD_OK);
        assert_int_equal(tp.instances, 1);
        assert_true(tp.last_time > 0);
        /* Each thread's 1024 pages were touched: its samples stand for them. */
        double acc;
        assert_int_equal(pd_object_accesses(obj, t, &acc), PD_OK);
        assert_true(acc >= 2 * 512);
        assert_true(tp.accesses == acc);
        total += acc;
    }
    double all;
    assert_int_equal(pd_object_accesses(obj, -1, &all), PD_OK);
    assert_float_equal(all, total, 1e-9 * total); /* (rate-weighted: not integers) */
    /* No backend: every task's share of DRAM is 1 and the plan gives it all. */
    pd_task_plan plan[8];
    double makespan = 0;
    assert_int_equal(pd_plan_query(plan, 8, &makespan), nthreads);
    assert_true(makespan > 0);
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

/* While a task runs, a system call on a sampled page sees EFAULT (the
 * documented caveat); unregistering the object unprotects it at once. */
static void test_unregister_unprotects(void **state)
{
    (void)state;
    unsigned char *buf = aligned_alloc(2 * MB, 2 * MB);
    assert_non_null(buf);
    memset(buf, 1, 2 * MB);
    setenv("PADDISER_SAMPLE_PERIOD_MS", "0", 1);
    setenv("PADDISER_SAMPLE_SPELL_PCT", "0", 1); /* every sample armed, not a slice */
    init_none(1);
    int obj = pd_object_register("b", buf, 2 * MB, NULL);
    assert_true(obj >= 0);
    assert_int_equal(pd_task_begin(0), PD_OK);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0); /* a pipe copies from the buffer (/dev/null would not) */
    int fd = pfd[1];
    /* PD_SAMPLE_MIN_PER_OBJECT of the 512 pages are armed samples. */
    int efaults = 0;
    for (size_t off = 0; off < 2 * MB; off += 4096)
        if (write(fd, buf + off, 16) < 0 && errno == EFAULT)
            efaults++;
    assert_int_equal(efaults, PD_SAMPLE_MIN_PER_OBJECT);
    assert_int_equal(pd_object_unregister(obj), PD_OK);
    for (size_t off = 0; off < 2 * MB; off += 4096)
        assert_int_equal(write(fd, buf + off, 16), 16);
    close(pfd[0]);
    close(pfd[1]);
    assert_int_equal(pd_task_end(0), PD_OK);
    unsetenv("PADDISER_SAMPLE_PERIOD_MS");
    unsetenv("PADDISER_SAMPLE_SPELL_PCT");
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

static void test_sampling_off_and_env_overrides(void **state)
{
    (void)state;
    setenv("PADDISER_SAMPLING", "off", 1);
    setenv("PADDISER_PLANNER", "bogus", 1); /* reported and ignored */
    assert_int_equal(pd_init(NULL), PD_OK);
    unsetenv("PADDISER_SAMPLING");
    unsetenv("PADDISER_PLANNER");
    pd_profile_info info;
    pd_profile_info_get(&info);
    assert_int_equal(info.sampling, 0);
    assert_string_equal(info.backend, "none"); /* AUTO without a slow tier */
    assert_non_null(strstr(info.backend_note, "no slow memory tier"));
    if (!info.hw_counters)
        assert_non_null(strstr(info.counters_note, "hardware counters unavailable: "));
    assert_int_equal(pd_finalize(), PD_OK);
}

int main(void)
{
    setenv("PADDISER_QUIET", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_order_errors_before_init, teardown),
        cmocka_unit_test_teardown(test_init_twice_and_bad_options, teardown),
        cmocka_unit_test_teardown(test_object_errors, teardown),
        cmocka_unit_test_teardown(test_object_bad_ranges, teardown),
        cmocka_unit_test_teardown(test_task_errors, teardown),
        cmocka_unit_test_teardown(test_task_end_leaves_waits_out, teardown),
        cmocka_unit_test_teardown(test_task_pause_leaves_its_wait_out, teardown),
        cmocka_unit_test_teardown(test_task_pause_keeps_sampling, teardown),
        cmocka_unit_test_teardown(test_strerror, teardown),
        cmocka_unit_test_teardown(test_lb_hm_config, teardown),
        cmocka_unit_test_teardown(test_lb_hm_config_finalizes_at_exit, teardown),
        cmocka_unit_test_teardown(test_reallocation_keeps_objects, teardown),
        cmocka_unit_test_teardown(test_lb_hm_config_sizes_past_2gib, teardown),
        cmocka_unit_test_teardown(test_concurrent_tasks_openmp, teardown),
        cmocka_unit_test_teardown(test_unregister_unprotects, teardown),
        cmocka_unit_test_teardown(test_sampling_off_and_env_overrides, teardown),
    };
    return cmocka_run_group_tests_name("runtime_api", tests, NULL, NULL);
}
