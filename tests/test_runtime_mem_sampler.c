/* Tests of the PMU memory-load sampler (src/lib/mem_sampler.c) on a machine
 * without a PMU: the ring parser on byte streams in the kernel's record
 * layout (tests/fixtures/pmu/basic.bin, written by make_streams.py there, not
 * recorded on hardware), discovery on fake sysfs trees, the fallback of
 * PADDISER_SAMPLER=auto on this machine, and whole runtime runs through a
 * fake perf_event_open/mmap whose ring the test writes as the kernel would:
 * per-task counts with no page protection changed. */
#include <errno.h>
#include <omp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/util.h"
#include "lib/mem_sampler.h"
#include "lib/page_sampler.h"
#include "lib/runtime_internal.h"
#include "paddiser.h"

#define MB (1024ul * 1024ul)
#define KB 1024ul
/* Where make_streams.py puts the objects its addresses fall in. */
#define BASE ((uintptr_t)0x7E0000000000ull)
#define OBJ_A BASE
#define OBJ_B (BASE + 16 * MB)
/* Its records carry what perf mem asks for: more than the runtime does. */
#define FIXTURE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT)

static const char *fixture(const char *rel)
{
    static char path[512];
    const char *t = getenv("TESTS_DIR");
    snprintf(path, sizeof path, "%s/fixtures/pmu/%s", t && *t ? t : "tests", rel);
    return path;
}

/* ---- the parser on the fixture stream ------------------------------------------------ */

static unsigned char *stream;
static size_t stream_len;

/* Objects A and B at the addresses the stream names, one sample region per
 * 2 MB (A: samples 0-3, B: sample 4), in a page sampler that protects
 * nothing. Address ranges only: neither the sampler nor the parser touches
 * them, so nothing is mapped there (sanitizers reserve parts of the address
 * space). */
static int setup_objects(void **state)
{
    (void)state;
    pd_sampler_config cfg = {.seed = 7, .min_per_object = 1, .no_protect = 1};
    if (pd_sampler_start(&cfg) != 0)
        return -1;
    pd_sampler_range r[2] = {{(void *)OBJ_A, 8 * MB, 0}, {(void *)OBJ_B, 64 * KB, 1}};
    if (pd_sampler_set_ranges(r, 2) != 0 || pd_sampler_nsamples() != 5)
        return -1;
    stream = (unsigned char *)pd_read_file(fixture("basic.bin"), &stream_len);
    return stream && stream_len == 400 ? 0 : -1;
}

static int teardown_objects(void **state)
{
    (void)state;
    pd_sampler_stop();
    free(stream);
    return 0;
}

/* Copies the stream into a ring of size bytes from position pos on. */
static void ring_put(unsigned char *ring, uint64_t size, uint64_t pos, const unsigned char *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        ring[(pos + i) & (size - 1)] = src[i];
}

/* What make_streams.py says basic.bin holds, charged to slot. */
static void assert_basic_counts(int slot, uint64_t last_region3)
{
    assert_int_equal(pd_sampler_count(0, slot), 1);
    assert_int_equal(pd_sampler_count(1, slot), 2);
    assert_int_equal(pd_sampler_count(2, slot), 0);
    assert_int_equal(pd_sampler_count(3, slot), 2 + last_region3);
    assert_int_equal(pd_sampler_count(4, slot), 1);
}

static void test_parse_charges_regions_and_task(void **state)
{
    (void)state;
    pd_sampler_reset_counts();
    unsigned char ring[1024] = {0};
    ring_put(ring, sizeof ring, 0, stream, stream_len);
    pd_mem_stats st = {0};
    assert_int_equal(pd_mem_ring_parse(ring, sizeof ring, 0, stream_len, FIXTURE_TYPE, 2, &st), 400);
    assert_basic_counts(2, 1);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(pd_sampler_count(i, 1), 0); /* another task: nothing */
    assert_int_equal(st.samples, 10);
    assert_int_equal(st.charged, 7);
    assert_int_equal(st.outside, 3); /* the gap, no address, one past B */
    assert_int_equal(st.lost, 7);
    assert_int_equal(st.other, 2); /* throttle, unknown type */
    /* Charged through the page sampler's table, not as faults. */
    pd_sampler_stats ps;
    pd_sampler_get_stats(&ps);
    assert_int_equal(ps.faults, 0);
    assert_int_equal(ps.protect_calls, 0);
}

static void test_parse_wraps_around_the_ring(void **state)
{
    (void)state;
    /* A ring of 512 bytes, five laps in, the stream starting at every byte
     * offset: each record, header and field is cut by the end of the ring
     * at some offset. */
    unsigned char ring[512];
    for (uint64_t start = 0; start < sizeof ring; start++) {
        pd_sampler_reset_counts();
        memset(ring, 0xee, sizeof ring);
        uint64_t tail = 5 * sizeof ring + start;
        ring_put(ring, sizeof ring, tail, stream, stream_len);
        pd_mem_stats st = {0};
        assert_int_equal(pd_mem_ring_parse(ring, sizeof ring, tail, tail + stream_len, FIXTURE_TYPE, 3, &st),
                         tail + stream_len);
        assert_basic_counts(3, 1);
        assert_int_equal(st.samples, 10);
        assert_int_equal(st.charged, 7);
        assert_int_equal(st.lost, 7);
        assert_int_equal(st.other, 2);
    }
}

static void test_parse_leaves_a_partial_record(void **state)
{
    (void)state;
    pd_sampler_reset_counts();
    unsigned char ring[1024] = {0};
    ring_put(ring, sizeof ring, 0, stream, stream_len);
    pd_mem_stats st = {0};
    /* The last record (32 bytes) is 5 bytes short, then only its header. */
    assert_int_equal(pd_mem_ring_parse(ring, sizeof ring, 0, stream_len - 5, FIXTURE_TYPE, 1, &st), 368);
    assert_int_equal(pd_mem_ring_parse(ring, sizeof ring, 368, 376, FIXTURE_TYPE, 1, &st), 368);
    assert_basic_counts(1, 0);
    assert_int_equal(st.samples, 9);
    /* Once written, it is read. */
    assert_int_equal(pd_mem_ring_parse(ring, sizeof ring, 368, stream_len, FIXTURE_TYPE, 1, &st), 400);
    assert_basic_counts(1, 1);
    assert_int_equal(st.samples, 10);
}

static void test_parse_dropped_object_not_charged(void **state)
{
    (void)state;
    pd_sampler_reset_counts();
    pd_sampler_drop_object(1); /* B unregistered */
    unsigned char ring[1024] = {0};
    ring_put(ring, sizeof ring, 0, stream, stream_len);
    pd_mem_stats st = {0};
    pd_mem_ring_parse(ring, sizeof ring, 0, stream_len, FIXTURE_TYPE, 0, &st);
    assert_int_equal(pd_sampler_count(4, 0), 0);
    assert_int_equal(st.charged, 6);
    assert_int_equal(st.outside, 4);
}

/* ---- discovery ------------------------------------------------------------------- */

static int teardown_env(void **state)
{
    (void)state;
    unsetenv("PADDISER_SYS_ROOT");
    unsetenv("PADDISER_PROC_ROOT");
    unsetenv("PADDISER_SAMPLER");
    unsetenv("PADDISER_PMU_PERIOD");
    pd_finalize();
    pd_mem_sampler_stop();
    pd_mem_sampler_set_ops(NULL);
    return 0;
}

static int discover_in(const char *tree, pd_mem_event *ev, char *why, size_t len)
{
    setenv("PADDISER_SYS_ROOT", fixture(tree), 1);
    why[0] = '\0';
    return pd_mem_event_discover(ev, why, len);
}

static void test_discover_intel(void **state)
{
    (void)state;
    pd_mem_event ev;
    char why[300];
    assert_int_equal(discover_in("intel", &ev, why, sizeof why), 0);
    assert_string_equal(ev.name, "cpu/mem-loads");
    assert_int_equal(ev.type, 4);
    assert_int_equal(ev.config, 0x1cd); /* event 0xcd in 0-7, umask 1 in 8-15 */
    assert_int_equal(ev.config1, 3);    /* ldlat */
    assert_int_equal(ev.config2, 0);
    assert_int_equal(ev.precise_max, 3);
    assert_int_equal(ev.kernel_ok, 0);
}

/* Bits come from the format files: an (invented) event code split over
 * config:0-7,32-35 on a hybrid part's cpu_core PMU. */
static void test_discover_reads_format_bits(void **state)
{
    (void)state;
    pd_mem_event ev;
    char why[300];
    assert_int_equal(discover_in("hybrid", &ev, why, sizeof why), 0);
    assert_string_equal(ev.name, "cpu_core/mem-loads");
    assert_int_equal(ev.type, 8);
    assert_int_equal(ev.config, 0x1000001cdull);
    assert_int_equal(ev.config1, 30);
}

static void test_discover_amd_ibs(void **state)
{
    (void)state;
    pd_mem_event ev;
    char why[300];
    assert_int_equal(discover_in("amd", &ev, why, sizeof why), 0);
    assert_string_equal(ev.name, "ibs_op");
    assert_int_equal(ev.type, 11);
    assert_int_equal(ev.config, 1ull << 19); /* cnt_ctl: count dispatched ops */
    assert_int_equal(ev.config1, 0);
    assert_int_equal(ev.precise_max, 0);
    assert_int_equal(ev.kernel_ok, 1);
}

static void test_discover_none(void **state)
{
    (void)state;
    pd_mem_event ev;
    char why[1024], expect[1024];
    assert_int_equal(discover_in("none", &ev, why, sizeof why), -1);
    snprintf(expect, sizeof expect,
             "no memory-load sampling event in %s/bus/event_source/devices (neither cpu/events/mem-loads nor ibs_op)",
             fixture("none"));
    assert_string_equal(why, expect);
}

static void test_discover_missing_format(void **state)
{
    (void)state;
    pd_mem_event ev;
    char why[1024], expect[1024];
    assert_int_equal(discover_in("noformat", &ev, why, sizeof why), -1);
    snprintf(expect, sizeof expect, "%s/bus/event_source/devices/cpu/format/ldlat missing", fixture("noformat"));
    assert_string_equal(why, expect);
}

/* ---- a fake kernel: perf_event_open, mmap, ioctl ---------------------------------- */

#define FAKE_FD0 100
#define FAKE_MAX 16
static struct {
    unsigned char *map;
    size_t len;
    int open, enabled;
} fake[FAKE_MAX];
static int fake_next;
static int fake_open_errno;      /* != 0: every open fails with it */
static int fake_map_errno;       /* != 0: every mmap fails with it */
static unsigned fake_max_precise = 3; /* higher precise_ip: EOPNOTSUPP */
static struct perf_event_attr fake_attr; /* the last one opened */
static __thread int my_fd = -1;  /* the calling thread's event */

static int fake_open(void *ctx, struct perf_event_attr *attr)
{
    (void)ctx;
    if (fake_open_errno)
        return -fake_open_errno;
    if (attr->precise_ip > fake_max_precise)
        return -EOPNOTSUPP;
    int i = __atomic_fetch_add(&fake_next, 1, __ATOMIC_SEQ_CST);
    if (i >= FAKE_MAX)
        return -EMFILE;
    fake_attr = *attr;
    fake[i].open = 1;
    fake[i].enabled = !attr->disabled;
    my_fd = FAKE_FD0 + i;
    return my_fd;
}

static void *fake_map(void *ctx, int fd, size_t len)
{
    (void)ctx;
    if (fake_map_errno) {
        errno = fake_map_errno;
        return NULL;
    }
    size_t page = pd_page_size();
    unsigned char *p = aligned_alloc(page, len);
    if (!p)
        return NULL;
    memset(p, 0, len);
    struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)p;
    mp->data_offset = page;
    mp->data_size = len - page;
    fake[fd - FAKE_FD0].map = p;
    fake[fd - FAKE_FD0].len = len;
    return p;
}

/* The memory stays for the test to inspect; the next fake_reset frees it. */
static void fake_unmap(void *ctx, void *addr, size_t len) { (void)ctx, (void)addr, (void)len; }

static int fake_enable_calls;

static int fake_enable(void *ctx, int fd, int on)
{
    (void)ctx;
    __atomic_fetch_add(&fake_enable_calls, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fake[fd - FAKE_FD0].enabled, on, __ATOMIC_SEQ_CST);
    return 0;
}

static void fake_close(void *ctx, int fd)
{
    (void)ctx;
    fake[fd - FAKE_FD0].open = 0;
}

static const pd_mem_ops fake_ops = {fake_open, fake_map, fake_unmap, fake_enable, fake_close, NULL};

static void fake_reset(void)
{
    for (int i = 0; i < FAKE_MAX; i++)
        free(fake[i].map);
    memset(fake, 0, sizeof fake);
    fake_next = 0;
    fake_open_errno = 0;
    fake_map_errno = 0;
    fake_max_precise = 3;
    pd_mem_sampler_set_ops(&fake_ops);
}

/* The kernel writes a record into the calling thread's ring while its event
 * is enabled: the record, then data_head with release. A full ring waits
 * for the reader (the drain thread): this fake loses nothing by itself. */
static void fake_put(const unsigned char *rec, size_t len)
{
    if (my_fd < 0)
        return;
    int i = my_fd - FAKE_FD0;
    if (!fake[i].open || !__atomic_load_n(&fake[i].enabled, __ATOMIC_SEQ_CST))
        return;
    struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)fake[i].map;
    uint64_t head = mp->data_head;
    for (int waited = 0; head + len - __atomic_load_n(&mp->data_tail, __ATOMIC_ACQUIRE) > mp->data_size; waited++) {
        assert_true(waited < 20000); /* 2 s: the drain thread never came */
        nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    ring_put(fake[i].map + mp->data_offset, mp->data_size, head, rec, len);
    __atomic_store_n(&mp->data_head, head + len, __ATOMIC_RELEASE);
}

/* A load sample in PD_MEM_SAMPLE_TYPE's layout: the header, the address. */
static void fake_sample(uintptr_t addr)
{
    unsigned char rec[16];
    struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof rec};
    uint64_t a = addr;
    memcpy(rec, &h, 8);
    memcpy(rec + 8, &a, 8);
    fake_put(rec, sizeof rec);
}

/* The kernel found the ring full n times: a PERF_RECORD_LOST. */
static void fake_lost(uint64_t n)
{
    unsigned char rec[24];
    struct perf_event_header h = {PERF_RECORD_LOST, 0, sizeof rec};
    uint64_t id = 0;
    memcpy(rec, &h, 8);
    memcpy(rec + 8, &id, 8);
    memcpy(rec + 16, &n, 8);
    fake_put(rec, sizeof rec);
}

/* ---- starting: errors explained, precise_ip stepped down ------------------------------ */

static void test_start_explains_paranoid(void **state)
{
    (void)state;
    fake_reset();
    fake_open_errno = EACCES;
    pd_mem_event ev;
    char why[1024], expect[1024];
    assert_int_equal(discover_in("intel", &ev, why, sizeof why), 0);
    setenv("PADDISER_PROC_ROOT", fixture("paranoid3"), 1);
    assert_int_equal(pd_mem_sampler_start(&ev, 0, why, sizeof why), -1);
    snprintf(expect, sizeof expect,
             "perf_event_open(cpu/mem-loads): Permission denied; %s/sys/kernel/perf_event_paranoid is 3 "
             "(sampling user space needs <= 2, or CAP_PERFMON)",
             fixture("paranoid3"));
    assert_string_equal(why, expect);
    assert_int_equal(pd_mem_sampler_running(), 0);

    fake_open_errno = ENOENT;
    assert_int_equal(pd_mem_sampler_start(&ev, 0, why, sizeof why), -1);
    assert_string_equal(why, "perf_event_open(cpu/mem-loads): No such file or directory");

    fake_open_errno = 0;
    fake_map_errno = EPERM;
    assert_int_equal(pd_mem_sampler_start(&ev, 0, why, sizeof why), -1);
    assert_string_equal(why, "mmap(cpu/mem-loads): Operation not permitted (the ring exceeds the locked-memory "
                             "allowance: /proc/sys/kernel/perf_event_mlock_kb, RLIMIT_MEMLOCK)");
    assert_int_equal(fake[0].open, 0); /* the event that did not map was closed */
}

static void test_start_attr_and_precise(void **state)
{
    (void)state;
    fake_reset();
    fake_max_precise = 1; /* the PMU takes precise_ip 1 only */
    pd_mem_event ev;
    char why[600];
    assert_int_equal(discover_in("intel", &ev, why, sizeof why), 0);
    assert_int_equal(pd_mem_sampler_start(&ev, 0, why, sizeof why), 0);
    assert_int_equal(fake_attr.type, 4);
    assert_int_equal(fake_attr.config, 0x1cd);
    assert_int_equal(fake_attr.config1, 3);
    assert_int_equal(fake_attr.precise_ip, 1);
    assert_int_equal(fake_attr.sample_type, PERF_SAMPLE_ADDR);
    assert_int_equal(fake_attr.sample_period, PD_MEM_PERIOD);
    assert_int_equal(fake_attr.exclude_kernel, 1);
    assert_int_equal(fake_attr.disabled, 1);
    assert_int_equal(fake[0].open, 0); /* the probe was closed */
    assert_int_equal(pd_mem_sampler_period(), PD_MEM_PERIOD);
    pd_mem_sampler_stop();
    assert_int_equal(pd_mem_sampler_period(), 0);
}

/* ---- the runtime ------------------------------------------------------------------ */

static FILE *cap;
static int saved_stderr = -1;

static void capture_stderr(void)
{
    fflush(stderr);
    cap = tmpfile();
    assert_non_null(cap);
    saved_stderr = dup(2);
    dup2(fileno(cap), 2);
}

/* What went to stderr since capture_stderr (caller frees). */
static char *captured(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    long n = ftell(cap);
    char *s = calloc((size_t)n + 1, 1);
    rewind(cap);
    assert_int_equal(fread(s, 1, (size_t)n, cap), (size_t)n);
    fclose(cap);
    return s;
}

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *hit = strstr(p, needle);
        n += hit && hit < end;
        p = nl ? nl + 1 : end;
    }
    return n;
}

static void init_sim(void)
{
    unsetenv("PADDISER_QUIET");
    pd_options o;
    pd_options_default(&o);
    o.backend = PD_BACKEND_SIM;
    o.sampling = 1;
    assert_int_equal(pd_init(&o), PD_OK);
}

static void sweep(unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        ((volatile unsigned char *)p)[i] += 1;
}

/* PADDISER_SAMPLER=auto without a PMU event: one line says why, the page
 * protection sampler profiles. */
static void test_auto_falls_back_with_one_line(void **state)
{
    (void)state;
    setenv("PADDISER_SYS_ROOT", fixture("none"), 1);
    capture_stderr();
    init_sim();
    char *err = captured();
    char expect[1024];
    snprintf(expect, sizeof expect,
             "paddiser: PMU load sampling unavailable (no memory-load sampling event in %s/bus/event_source/devices "
             "(neither cpu/events/mem-loads nor ibs_op)): sampling accesses by page protection (mprotect) instead\n",
             fixture("none"));
    assert_non_null(strstr(err, expect));
    assert_int_equal(count_lines_with(err, "sampling"), 1); /* the one line */
    free(err);
    assert_int_equal(rt.sampling, 1);
    assert_int_equal(rt.pmu_period, 0);

    unsigned char *buf = aligned_alloc(2 * MB, 8 * MB);
    assert_non_null(buf);
    memset(buf, 0, 8 * MB);
    int obj = pd_object_register("buf", buf, 8 * MB, NULL);
    assert_true(obj >= 0);
    assert_int_equal(pd_task_begin(0), PD_OK);
    sweep(buf, 8 * MB);
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_true(info.sampled_faults > 0);
    assert_string_equal(info.sampler, "mprotect");
    double acc = 0;
    assert_int_equal(pd_object_accesses(obj, 0, &acc), PD_OK);
    assert_true(acc > 0);
    assert_int_equal(pd_finalize(), PD_OK);
    free(buf);
}

/* The same on this machine's own /sys, whatever it has. */
static void test_auto_on_this_machine(void **state)
{
    (void)state;
    pd_mem_sampler_set_ops(NULL);
    pd_mem_event ev;
    char why[600];
    int have_event = pd_mem_event_discover(&ev, why, sizeof why) == 0;
    capture_stderr();
    init_sim();
    char *err = captured();
    if (rt.pmu_period) {
        assert_null(strstr(err, "PMU load sampling unavailable"));
    } else {
        /* No PMU here (the development machine): discovery or the open says why. */
        assert_int_equal(count_lines_with(err, "PMU load sampling unavailable ("), 1);
        assert_non_null(strstr(err, have_event ? "): sampling accesses by page protection (mprotect) instead\n"
                                               : "(no memory-load sampling event in /sys/bus/event_source/devices"));
        assert_int_equal(rt.sampling, 1);
    }
    free(err);
    assert_int_equal(pd_finalize(), PD_OK);
}

/* PADDISER_SAMPLER=pmu without a PMU: no profile rather than protections. */
static void test_pmu_only_without_pmu(void **state)
{
    (void)state;
    setenv("PADDISER_SYS_ROOT", fixture("none"), 1);
    setenv("PADDISER_SAMPLER", "pmu", 1);
    capture_stderr();
    init_sim();
    char *err = captured();
    assert_non_null(strstr(err, "paddiser: PADDISER_SAMPLER=pmu: PMU load sampling unavailable (no memory-load "));
    assert_non_null(strstr(err, "): per-object accesses not measured\n"));
    free(err);
    assert_int_equal(rt.sampling, 0);
    assert_int_equal(pd_sampler_running(), 0);
    pd_profile_info info;
    assert_int_equal(pd_profile_info_get(&info), PD_OK);
    assert_string_equal(info.sampler, "off");
    assert_int_equal(info.sampling, 0);
    assert_non_null(strstr(info.sampling_note, "PADDISER_SAMPLER=pmu"));
    assert_int_equal(pd_finalize(), PD_OK);
}

static void test_mprotect_forced(void **state)
{
    (void)state;
    fake_reset(); /* would work: not asked for */
    setenv("PADDISER_SYS_ROOT", fixture("intel"), 1);
    setenv("PADDISER_SAMPLER", "mprotect", 1);
    capture_stderr();
    init_sim();
    char *err = captured();
    assert_null(strstr(err, "PMU"));
    free(err);
    assert_int_equal(rt.sampling, 1);
    assert_int_equal(rt.pmu_period, 0);
    assert_int_equal(fake_next, 0); /* never opened */
    assert_int_equal(pd_finalize(), PD_OK);
}

/* Any mapping overlapping [lo, lo + len) that is not read-write. */
static int protected_in(uintptr_t lo, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && a < lo + len && b > lo &&
            strncmp(perms, "rw", 2) != 0)
            bad = 1;
    }
    fclose(f);
    return bad;
}

/* A whole run on a fake PMU: two OpenMP threads run tasks 0 and 1, each
 * thread's event writes samples into its own ring; task 1 writes three rings'
 * worth, which only the drain thread can make room for. The table gets
 * per-task counts, scaled by the period, and no page is ever protected. */
static void test_fake_pmu_run(void **state)
{
    (void)state;
    fake_reset();
    setenv("PADDISER_SYS_ROOT", fixture("intel"), 1);
    setenv("PADDISER_PMU_PERIOD", "1000", 1);
    struct sigaction before, after;
    sigaction(SIGSEGV, NULL, &before);
    capture_stderr();
    init_sim();
    char *err = captured();
    assert_null(strstr(err, "PMU load sampling unavailable"));
    free(err);
    assert_int_equal(rt.pmu_period, 1000);
    assert_int_equal(rt.sampling, 1);
    pd_profile_info pi;
    assert_int_equal(pd_profile_info_get(&pi), PD_OK);
    assert_string_equal(pi.sampler, "pmu");

    unsigned char *a = aligned_alloc(2 * MB, 8 * MB), *b = aligned_alloc(4096, 64 * KB);
    assert_non_null(a);
    assert_non_null(b);
    memset(a, 0, 8 * MB);
    memset(b, 0, 64 * KB);
    int oa = pd_object_register("a", a, 8 * MB, NULL), ob = pd_object_register("b", b, 64 * KB, NULL);
    assert_true(oa >= 0 && ob >= 0);
    size_t ring_samples = (size_t)PD_MEM_RING_PAGES * pd_page_size() / 16;
    int failed = 0;
#pragma omp parallel num_threads(2) reduction(| : failed)
    {
        int me = omp_get_thread_num();
        fake_sample((uintptr_t)a); /* before the task: the event is off */
        failed |= pd_task_begin(me) != PD_OK;
        if (me == 0) {
            for (int i = 0; i < 10; i++)
                fake_sample((uintptr_t)a + (uintptr_t)i * 64);
        } else {
            for (size_t i = 0; i < 3 * ring_samples; i++)
                fake_sample((uintptr_t)a + 6 * MB + (i % 4096) * 64);
            for (int i = 0; i < 5; i++)
                fake_sample((uintptr_t)b + (uintptr_t)i * 4096);
            fake_lost(3);
        }
        fake_sample((uintptr_t)&me); /* a stack address: no object */
        failed |= pd_task_end(me) != PD_OK;
        fake_sample((uintptr_t)a); /* after: off again */
    }
    assert_int_equal(failed, 0);
    assert_int_equal(pd_sync_point(), PD_OK);

    double acc;
    assert_int_equal(pd_object_accesses(oa, 0, &acc), PD_OK);
    assert_float_equal(acc, 10 * 1000.0, 1e-9);
    assert_int_equal(pd_object_accesses(oa, 1, &acc), PD_OK);
    assert_float_equal(acc, 3.0 * (double)ring_samples * 1000.0, 1e-9);
    assert_int_equal(pd_object_accesses(ob, 1, &acc), PD_OK);
    assert_float_equal(acc, 5 * 1000.0, 1e-9);
    assert_int_equal(pd_object_accesses(ob, 0, &acc), PD_OK);
    assert_float_equal(acc, 0, 0);

    pd_mem_stats ms;
    pd_mem_sampler_get_stats(&ms);
    assert_int_equal(ms.threads, 2);
    assert_int_equal(ms.charged, 10 + 3 * ring_samples + 5);
    assert_int_equal(ms.outside, 2);
    assert_int_equal(ms.lost, 3);
    assert_int_equal(ms.open_failures, 0);

    /* No page protection changed, no SIGSEGV handler installed. */
    pd_sampler_stats st;
    pd_sampler_get_stats(&st);
    assert_int_equal(st.faults, 0);
    assert_int_equal(st.rearms, 0);
    assert_int_equal(st.passes, 0);
    assert_int_equal(st.protect_calls, 0);
    assert_int_equal(protected_in((uintptr_t)a, 8 * MB), 0);
    assert_int_equal(protected_in((uintptr_t)b, 64 * KB), 0);
    sigaction(SIGSEGV, NULL, &after);
    assert_true(after.sa_sigaction == before.sa_sigaction);

    capture_stderr();
    assert_int_equal(pd_finalize(), PD_OK);
    err = captured();
    char expect[200];
    snprintf(expect, sizeof expect,
             "paddiser: PMU load sampling: the kernel dropped 3 of %zu samples (rings full); "
             "a larger PADDISER_PMU_PERIOD samples less often\n",
             3 + 10 + 3 * ring_samples + 5 + 2);
    assert_string_equal(err, expect);
    free(err);
    for (int i = 0; i < fake_next; i++)
        assert_int_equal(fake[i].open, 0); /* every event closed */
    free(a);
    free(b);
}

/* fork() while a thread runs a task with its PMU ring open: the child has
 * the runtime and the PMU sampler off (so that its pd_init may start one of
 * its own: it said "already running" before), forgets the parent's events
 * without an ioctl or a ring read (both would change the parent's sampling:
 * the events and ring pages are shared), and pd_init starts a runtime of its
 * own (without sampling here: under ThreadSanitizer a child of a
 * multi-threaded parent may not start threads, and the drain thread is
 * one); the parent's task goes on and its samples are counted. A watchdog
 * turns a hang in the child into a failure. */
static void test_fork_with_pmu_sampler(void **state)
{
    (void)state;
    fake_reset();
    setenv("PADDISER_SYS_ROOT", fixture("intel"), 1);
    setenv("PADDISER_PMU_PERIOD", "1000", 1);
    setenv("PADDISER_QUIET", "1", 1);
    init_sim();
    assert_int_equal(rt.pmu_period, 1000);
    unsigned char *a = aligned_alloc(4096, 1 * MB);
    assert_non_null(a);
    memset(a, 0, 1 * MB);
    int oa = pd_object_register("a", a, 1 * MB, NULL);
    assert_true(oa >= 0);
    assert_int_equal(pd_task_begin(0), PD_OK);
    for (int i = 0; i < 4; i++)
        fake_sample((uintptr_t)a + (uintptr_t)i * 4096);
    int ring = my_fd - FAKE_FD0;
    const struct perf_event_mmap_page *mp = (const struct perf_event_mmap_page *)fake[ring].map;
    uint64_t tail_before = mp->data_tail;
    int enables_before = fake_enable_calls;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        int bad = 0;
        bad |= pd_mem_sampler_running() != 0;
        bad |= (fake_enable_calls != enables_before) << 1; /* no ioctl on the parent's event */
        bad |= (mp->data_tail != tail_before) << 2;        /* its ring not read */
        bad |= (pd_task_end(0) != PD_ESTATE) << 3;         /* the runtime is off */
        bad |= (pd_mem_sampler_period() != 0) << 4;
        pd_options o;
        pd_options_default(&o);
        o.backend = PD_BACKEND_SIM;
        o.sampling = 0;
        bad |= (pd_init(&o) != PD_OK) << 5;
        bad |= (pd_finalize() != PD_OK) << 6;
        _exit(bad);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    for (int i = 4; i < 6; i++)
        fake_sample((uintptr_t)a + (uintptr_t)i * 4096);
    assert_int_equal(pd_task_end(0), PD_OK);
    assert_int_equal(pd_sync_point(), PD_OK);
    double acc;
    assert_int_equal(pd_object_accesses(oa, 0, &acc), PD_OK);
    assert_float_equal(acc, 6 * 1000.0, 1e-9);
    assert_int_equal(pd_finalize(), PD_OK);
    free(a);
}

int main(void)
{
    const struct CMUnitTest parse[] = {
        cmocka_unit_test(test_parse_charges_regions_and_task),
        cmocka_unit_test(test_parse_wraps_around_the_ring),
        cmocka_unit_test(test_parse_leaves_a_partial_record),
        cmocka_unit_test(test_parse_dropped_object_not_charged),
    };
    const struct CMUnitTest rest[] = {
        cmocka_unit_test_teardown(test_discover_intel, teardown_env),
        cmocka_unit_test_teardown(test_discover_reads_format_bits, teardown_env),
        cmocka_unit_test_teardown(test_discover_amd_ibs, teardown_env),
        cmocka_unit_test_teardown(test_discover_none, teardown_env),
        cmocka_unit_test_teardown(test_discover_missing_format, teardown_env),
        cmocka_unit_test_teardown(test_start_explains_paranoid, teardown_env),
        cmocka_unit_test_teardown(test_start_attr_and_precise, teardown_env),
        cmocka_unit_test_teardown(test_auto_falls_back_with_one_line, teardown_env),
        cmocka_unit_test_teardown(test_auto_on_this_machine, teardown_env),
        cmocka_unit_test_teardown(test_pmu_only_without_pmu, teardown_env),
        cmocka_unit_test_teardown(test_mprotect_forced, teardown_env),
        cmocka_unit_test_teardown(test_fake_pmu_run, teardown_env),
        cmocka_unit_test_teardown(test_fork_with_pmu_sampler, teardown_env),
    };
    int failed = cmocka_run_group_tests_name("mem_sampler_parse", parse, setup_objects, teardown_objects);
    return failed | cmocka_run_group_tests_name("mem_sampler", rest, NULL, NULL);
}
