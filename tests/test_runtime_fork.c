/* libpaddiser under fork() and under a SIGSEGV handler the application
 * installs after pd_init (issue #13 items 7 and 8). Every scenario runs in
 * a forked child with a watchdog alarm(), so a hang is a failure (the child
 * dies of SIGALRM), not a stuck suite; the parent asserts on exit statuses
 * and on what the child wrote to stderr. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "paddiser.h"

/* AddressSanitizer's allocator in GCC 12 and clang 14 (Debian 12) takes
 * no lock around fork(): a child forked while another thread is inside
 * malloc or free hangs in its first allocation (gdb on a hung child of
 * test_fork_while_threads_run_tasks, 1 run in about 30 under check-asan:
 * json_delete -> free -> SizeClassAllocator64::GetFromAllocator ->
 * Mutex::Lock). glibc's malloc locks its arenas around fork; ASan does so
 * from LLVM 18 on (llvm/llvm-project#75290). */
#if defined(__SANITIZE_ADDRESS__)
#define ALLOCATOR_FORK_UNSAFE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOCATOR_FORK_UNSAFE 1
#endif
#endif
#ifndef ALLOCATOR_FORK_UNSAFE
#define ALLOCATOR_FORK_UNSAFE 0
#endif

#define PAGE 4096ul
#define BUF (1024ul * 1024ul) /* 256 pages, every one sampled */
#define WATCHDOG_S 20

static unsigned char *map_buf(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0, len);
    return p;
}

static void touch(unsigned char *buf, size_t off, size_t len)
{
    for (size_t i = 0; i < len; i += PAGE)
        ((volatile unsigned char *)buf)[off + i] += 1;
}

static void init_or_exit(pd_backend_kind backend, int sampling, int code)
{
    pd_options o;
    pd_options_default(&o);
    o.backend = backend;
    o.sampling = sampling;
    if (pd_init(&o) != PD_OK)
        _exit(code);
}

/* One instance of task 0 touching buf; exit code `code` when a call fails. */
static void instance_or_exit(unsigned char *buf, int code)
{
    if (pd_task_begin(0) != PD_OK)
        _exit(code);
    touch(buf, 0, BUF);
    if (pd_task_end(0) != PD_OK || pd_sync_point() != PD_OK)
        _exit(code);
}

/* Starts a child whose stderr goes to a pipe; the parent gets its read end. */
static pid_t fork_capturing(int *err_fd)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(WATCHDOG_S);
        close(p[0]);
        dup2(p[1], 2);
        close(p[1]);
        unsetenv("PADDISER_QUIET"); /* the notices are part of the behaviour */
        return 0;
    }
    close(p[1]);
    *err_fd = p[0];
    return pid;
}

/* Reads the child's stderr to EOF (the first 64 KiB of it), reaps the
 * child; its exit status goes to *status. */
static char *reap_child(pid_t pid, int err_fd, int *status)
{
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    ssize_t r;
    while ((r = read(err_fd, out + len, cap - 1 - len)) > 0 || (r < 0 && errno == EINTR))
        len += r > 0 ? (size_t)r : 0;
    out[len] = '\0';
    close(err_fd);
    assert_int_equal(waitpid(pid, status, 0), pid);
    return out;
}

static int exited_0(int st) { return WIFEXITED(st) && WEXITSTATUS(st) == 0; }

/* The same, and the child must have exited with 0. */
static char *finish_child(pid_t pid, int err_fd)
{
    int st;
    char *out = reap_child(pid, err_fd, &st);
    if (!exited_0(st))
        fail_msg("child %s %d; its stderr:\n%s", WIFEXITED(st) ? "exited with" : "killed by signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out);
    return out;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void set_sampling_env(const char *period_ms)
{
    setenv("PADDISER_SAMPLE_PERIOD_MS", period_ms, 1);
    setenv("PADDISER_SAMPLE_BUDGET_PCT", "0", 1);     /* every re-arm is due */
    setenv("PADDISER_SAMPLE_MIN_PER_OBJECT", "256", 1); /* every page of BUF */
    setenv("PADDISER_QUIET", "1", 1);
}

static int teardown(void **state)
{
    (void)state;
    pd_finalize();
    unsetenv("PADDISER_SAMPLE_PERIOD_MS");
    unsetenv("PADDISER_SAMPLE_BUDGET_PCT");
    unsetenv("PADDISER_SAMPLE_MIN_PER_OBJECT");
    return 0;
}

/* ---- item 7: fork() while other threads run tasks ------------------------- */

#define THREADS 3
#define FORKS 20
#define PART ((BUF / THREADS) & ~(PAGE - 1)) /* each worker's own pages */

static struct {
    unsigned char *buf;
    int stop;   /* __atomic */
    int errors; /* __atomic */
    int park;   /* __atomic: workers wait between tasks while set */
    int parked; /* __atomic: how many wait */
} W;

/* Tasks back to back, and sync points when they get one: rt.lock, the
 * sampler's lock (1 ms ticks, every re-arm due) and the counters' are taken
 * all the time, so a fork lands while another thread holds one. */
static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    while (!__atomic_load_n(&W.stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&W.park, __ATOMIC_ACQUIRE)) {
            __atomic_add_fetch(&W.parked, 1, __ATOMIC_ACQ_REL);
            while (__atomic_load_n(&W.park, __ATOMIC_ACQUIRE))
                usleep(100);
            __atomic_sub_fetch(&W.parked, 1, __ATOMIC_ACQ_REL);
            continue;
        }
        if (pd_task_begin(me) != PD_OK)
            __atomic_add_fetch(&W.errors, 1, __ATOMIC_RELAXED);
        touch(W.buf, (size_t)(me - 1) * PART, PART);
        if (pd_task_end(me) != PD_OK)
            __atomic_add_fetch(&W.errors, 1, __ATOMIC_RELAXED);
        int rc = pd_sync_point(); /* PD_ESTATE while another task runs */
        if (rc != PD_OK && rc != PD_ESTATE)
            __atomic_add_fetch(&W.errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* The documented child: the runtime is off (PD_ESTATE, as before pd_init),
 * no page is left protected, and, with own_runtime, pd_init starts a runtime
 * of its own (without sampling here: under ThreadSanitizer a child of a
 * multi-threaded parent may not start threads, and the sampler's ticker is
 * one). */
static void child_after_fork(unsigned char *buf, int own_runtime)
{
    if (pd_task_begin(0) != PD_ESTATE || pd_task_end(0) != PD_ESTATE || pd_sync_point() != PD_ESTATE)
        _exit(2);
    pd_profile_info info;
    if (pd_profile_info_get(&info) != PD_OK || info.initialized)
        _exit(3);
    signal(SIGSEGV, SIG_DFL); /* a page still protected kills the child */
    touch(buf, 0, BUF);
    if (!own_runtime)
        _exit(0);
    init_or_exit(PD_BACKEND_NONE, 0, 4);
    if (pd_object_register("buf", buf, BUF, NULL) < 0)
        _exit(5);
    instance_or_exit(buf, 6);
    if (pd_finalize() != PD_OK)
        _exit(7);
    _exit(0);
}

static void test_fork_while_threads_run_tasks(void **state)
{
    (void)state;
    set_sampling_env("1");
    W.buf = map_buf(BUF);
    W.stop = 0;
    W.errors = 0;
    W.park = 0;
    W.parked = 0;
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.fast_capacity = BUF / 2;
    assert_int_equal(pd_init(&o), PD_OK);
    assert_true(pd_object_register("buf", W.buf, BUF, NULL) >= 0);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)), 0);

    int bad = 0; /* every child is reaped before failing: how many failed */
    char first[1024] = "";
    for (int i = 0; i < FORKS; i++) {
        usleep(2000); /* let the workers run between forks */
        /* Under ASan, a child that allocates (pd_init) is forked only with
         * the workers parked outside malloc; every other fork lands in
         * running workers, whose children check everything before pd_init. */
        int parked = ALLOCATOR_FORK_UNSAFE && i % 2;
        if (parked) {
            __atomic_store_n(&W.park, 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&W.parked, __ATOMIC_ACQUIRE) < THREADS)
                usleep(100);
        }
        int err_fd, st;
        pid_t pid = fork_capturing(&err_fd);
        if (pid == 0)
            child_after_fork(W.buf, !ALLOCATOR_FORK_UNSAFE || parked);
        __atomic_store_n(&W.park, 0, __ATOMIC_RELEASE);
        char *out = reap_child(pid, err_fd, &st);
        if (!exited_0(st) && !bad++)
            snprintf(first, sizeof first, "%s %d, stderr: %s", WIFEXITED(st) ? "exit" : "signal",
                     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), out);
        free(out);
    }
    __atomic_store_n(&W.stop, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    if (bad)
        fail_msg("%d of %d children failed; the first: %s", bad, FORKS, first);
    assert_int_equal(W.errors, 0);
    /* The parent's runtime went on. */
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_int_equal(info.sampling, 1);
    assert_true(info.sampled_faults > 0);
    assert_int_equal(pd_finalize(), PD_OK);
    munmap(W.buf, BUF);
}

/* A single-threaded parent forks inside a task, its samples armed: the
 * child's copies of the pages are read-write, the child says once why its
 * calls return PD_ESTATE, and a sampling runtime of its own works there. */
static void test_fork_inside_task_child_own_runtime(void **state)
{
    (void)state;
    set_sampling_env("0"); /* no ticker: the parent stays single-threaded */
    unsigned char *buf = map_buf(BUF);
    init_or_exit(PD_BACKEND_SIM, 1, 1);
    assert_true(pd_object_register("buf", buf, BUF, NULL) >= 0);
    assert_int_equal(pd_task_begin(0), PD_OK); /* armed: every page protected */

    int err_fd;
    pid_t pid = fork_capturing(&err_fd);
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        touch(buf, 0, BUF);
        if (pd_task_end(0) != PD_ESTATE || pd_task_begin(0) != PD_ESTATE || pd_sync_point() != PD_ESTATE)
            _exit(2);
        init_or_exit(PD_BACKEND_SIM, 1, 3);
        if (pd_object_register("buf", buf, BUF, NULL) < 0)
            _exit(4);
        instance_or_exit(buf, 5);
        pd_profile_info info;
        if (pd_profile_info_get(&info) != PD_OK || !info.sampling || info.sampled_faults == 0)
            _exit(6);
        if (pd_finalize() != PD_OK)
            _exit(7);
        _exit(0);
    }
    char *err = finish_child(pid, err_fd);
    char expect[96];
    snprintf(expect, sizeof expect, "paddiser: this process is a fork() child of process %ld,", (long)getpid());
    assert_int_equal(count_lines(err, expect), 1); /* once, for three calls */
    free(err);

    /* The parent's pages are still armed and counted. */
    touch(buf, 0, BUF);
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_true(info.sampled_faults >= BUF / PAGE);
    assert_int_equal(pd_finalize(), PD_OK);
    munmap(buf, BUF);
}

/* ---- item 8: the application's SIGSEGV handler installed after pd_init ---- */

static unsigned char *app_buf;
static volatile sig_atomic_t app_valid, app_invalid;
static sigjmp_buf app_jump;

/* The application's handler: counts faults. A fault on registered memory
 * (a valid access: the sampler's protection) is made to work, so the old
 * runtime shows up as a count instead of a hang; any other jumps back. */
static void app_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr, lo = (uintptr_t)app_buf;
    if (a >= lo && a < lo + BUF) {
        app_valid++;
        mprotect((void *)(a & ~(PAGE - 1)), PAGE, PROT_READ | PROT_WRITE);
        return;
    }
    app_invalid++;
    siglongjmp(app_jump, 1);
}

static void install_app_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = app_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

/* In the child: a genuine invalid access reaches the application's
 * handler; sampling reports that it stopped; the runtime goes on; at
 * pd_finalize the application's handler stays. */
static void child_after_handler_check(int code)
{
    pd_profile_info info;
    if (pd_profile_info_get(&info) != PD_OK || info.sampling || !strstr(info.sampling_note, "SIGSEGV handler"))
        _exit(code);
    volatile int *bad = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(app_jump, 1) == 0)
        *bad = 1;
    if (app_invalid != 1)
        _exit(code + 1);
    instance_or_exit(app_buf, code + 2);
    pd_task_plan plan[4];
    if (pd_plan_query(plan, 4, NULL) < 0 || pd_finalize() != PD_OK)
        _exit(code + 3);
    struct sigaction now;
    if (sigaction(SIGSEGV, NULL, &now) != 0 || now.sa_sigaction != app_handler)
        _exit(code + 4);
    if (app_valid != 0)
        _exit(code + 5);
    _exit(0);
}

/* Installed between instances (no page protected): noticed at the next
 * pd_task_begin, before anything is armed. */
static void test_app_handler_between_instances(void **state)
{
    (void)state;
    set_sampling_env("10");
    int err_fd;
    pid_t pid = fork_capturing(&err_fd);
    if (pid == 0) {
        app_buf = map_buf(BUF);
        init_or_exit(PD_BACKEND_SIM, 1, 1);
        if (pd_object_register("buf", app_buf, BUF, NULL) < 0)
            _exit(2);
        instance_or_exit(app_buf, 3);
        pd_profile_info info;
        if (pd_profile_info_get(&info) != PD_OK || !info.sampling || info.sampled_faults == 0)
            _exit(4);
        install_app_handler();
        instance_or_exit(app_buf, 5);
        if (app_valid != 0)
            _exit(6); /* valid accesses reached the application's handler */
        child_after_handler_check(10);
    }
    char *err = finish_child(pid, err_fd);
    assert_int_equal(count_lines(err, "paddiser: page sampling stopped: its SIGSEGV handler was replaced by the "
                                      "handler at 0x"),
                     1);
    free(err);
}

/* Installed while a task runs and every page is protected: the re-arm tick
 * notices it (no task boundary needed) and unprotects everything. */
static void test_app_handler_while_task_runs(void **state)
{
    (void)state;
    set_sampling_env("1");
    int err_fd;
    pid_t pid = fork_capturing(&err_fd);
    if (pid == 0) {
        app_buf = map_buf(BUF);
        init_or_exit(PD_BACKEND_SIM, 1, 1);
        if (pd_object_register("buf", app_buf, BUF, NULL) < 0 || pd_task_begin(0) != PD_OK)
            _exit(2);
        install_app_handler();
        pd_profile_info info;
        do /* the watchdog ends this if the tick never notices */
            usleep(1000);
        while (pd_profile_info_get(&info) == PD_OK && info.sampling);
        touch(app_buf, 0, BUF);
        if (app_valid != 0)
            _exit(3);
        if (pd_task_end(0) != PD_OK || pd_sync_point() != PD_OK)
            _exit(4);
        child_after_handler_check(10);
    }
    char *err = finish_child(pid, err_fd);
    assert_int_equal(count_lines(err, "paddiser: page sampling stopped:"), 1);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fork_while_threads_run_tasks, teardown),
        cmocka_unit_test_teardown(test_fork_inside_task_child_own_runtime, teardown),
        cmocka_unit_test_teardown(test_app_handler_between_instances, teardown),
        cmocka_unit_test_teardown(test_app_handler_while_task_runs, teardown),
    };
    return cmocka_run_group_tests_name("runtime_fork", tests, NULL, NULL);
}
