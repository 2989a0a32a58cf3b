/* PMU memory-load sampling (see mem_sampler.h). */
#include "lib/mem_sampler.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/sysroot.h"
#include "common/util.h"
#include "lib/page_sampler.h"
#include "lib/runtime_internal.h"

/* ---- discovery ------------------------------------------------------------- */

static char *read_sys(const char *rel)
{
    char path[512];
    char *text = pd_read_file(pd_sys_path(path, sizeof path, rel), NULL);
    return text ? pd_trim(text) : NULL;
}

/* Puts value into the bits a format file names ("config:0-7",
 * "config1:0-15", "config:32", "config:0-7,32-35": low value bits first, as
 * the perf tool does). 0, or -1 for a format it cannot read. */
static int apply_format(pd_mem_event *ev, const char *format, uint64_t value)
{
    const char *colon = strchr(format, ':');
    if (!colon)
        return -1;
    size_t n = (size_t)(colon - format);
    uint64_t *field = n == 6 && !strncmp(format, "config", 6)    ? &ev->config
                      : n == 7 && !strncmp(format, "config1", 7) ? &ev->config1
                      : n == 7 && !strncmp(format, "config2", 7) ? &ev->config2
                                                                 : NULL;
    if (!field)
        return -1;
    const char *p = colon + 1;
    while (*p) {
        char *end;
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        if (end == p)
            return -1;
        if (*end == '-') {
            p = end + 1;
            hi = strtoul(p, &end, 10);
            if (end == p)
                return -1;
        }
        if (lo > hi || hi > 63)
            return -1;
        for (unsigned long b = lo; b <= hi; b++, value >>= 1)
            if (value & 1)
                *field |= 1ull << b;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return value == 0 ? 0 : -1; /* a value wider than its bits is an error */
}

/* "event=0xcd,umask=0x1,ldlat=3" into config bits, through pmu/format/<term>. */
static int apply_terms(pd_mem_event *ev, const char *pmu, const char *terms, char *why, size_t whylen)
{
    char *copy = pd_strdup(terms), *save = NULL;
    if (!copy) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (char *term = strtok_r(copy, ",", &save); term && rc == 0; term = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(term, '=');
        unsigned long long value = 1; /* a bare term is a flag */
        if (eq) {
            *eq = '\0';
            char *end;
            errno = 0;
            value = strtoull(eq + 1, &end, 0);
            if (errno || end == eq + 1 || *pd_trim(end)) {
                snprintf(why, whylen, "cannot read term %s=%s of %s/events/mem-loads", term, eq + 1, pmu);
                rc = -1;
                break;
            }
        }
        char rel[256], path[512];
        snprintf(rel, sizeof rel, "bus/event_source/devices/%s/format/%s", pmu, pd_trim(term));
        char *format = read_sys(rel);
        if (!format || apply_format(ev, format, value) != 0) {
            snprintf(why, whylen, "%s %s", pd_sys_path(path, sizeof path, rel),
                     format ? "is not a config bit range for its value" : "missing");
            rc = -1;
        }
        free(format);
    }
    free(copy);
    return rc;
}

static int read_type(const char *pmu, uint32_t *type)
{
    char rel[256];
    snprintf(rel, sizeof rel, "bus/event_source/devices/%s/type", pmu);
    char *text = read_sys(rel);
    unsigned long long v;
    int ok = text && pd_parse_u64(text, &v) && v <= 0xffffffffull;
    free(text);
    if (ok)
        *type = (uint32_t)v;
    return ok ? 0 : -1;
}

int pd_mem_event_discover(pd_mem_event *ev, char *why, size_t whylen)
{
    memset(ev, 0, sizeof *ev);
    /* Intel: the core PMU's load-latency event ("cpu_core" on hybrid parts). */
    static const char *const intel[] = {"cpu", "cpu_core"};
    for (size_t i = 0; i < PD_ARRAY_LEN(intel); i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "bus/event_source/devices/%s/events/mem-loads", intel[i]);
        char *terms = read_sys(rel);
        if (!terms)
            continue;
        snprintf(ev->name, sizeof ev->name, "%s/mem-loads", intel[i]);
        int rc = read_type(intel[i], &ev->type);
        if (rc != 0)
            snprintf(why, whylen, "%s/mem-loads found but its PMU has no readable type file", intel[i]);
        else
            rc = apply_terms(ev, intel[i], terms, why, whylen);
        free(terms);
        ev->precise_max = 3; /* PEBS: the kernel takes up to what the CPU has */
        ev->precise_min = 1;
        return rc;
    }
    /* AMD: IBS op sampling, counting dispatched ops where the PMU can. */
    if (read_type("ibs_op", &ev->type) == 0) {
        snprintf(ev->name, sizeof ev->name, "ibs_op");
        char *cnt_ctl = read_sys("bus/event_source/devices/ibs_op/format/cnt_ctl");
        int rc = cnt_ctl && apply_format(ev, cnt_ctl, 1) != 0 ? -1 : 0;
        if (rc)
            snprintf(why, whylen, "ibs_op/format/cnt_ctl (%s) is not a config bit", cnt_ctl);
        free(cnt_ctl);
        ev->precise_max = ev->precise_min = 0; /* IBS is precise by design */
        ev->kernel_ok = 1;
        return rc;
    }
    char path[512];
    snprintf(why, whylen, "no memory-load sampling event in %s (neither cpu/events/mem-loads nor ibs_op)",
             pd_sys_path(path, sizeof path, "bus/event_source/devices"));
    return -1;
}

/* ---- ring parsing ----------------------------------------------------------- */

/* Copies len bytes at ring position pos (modulo size) out of the ring. */
static void ring_copy(void *dst, const unsigned char *data, uint64_t size, uint64_t pos, size_t len)
{
    size_t off = (size_t)(pos & (size - 1)), first = len < size - off ? len : (size_t)(size - off);
    memcpy(dst, data + off, first);
    memcpy((unsigned char *)dst + first, data, len - first);
}

/* Byte offset of a fixed-size field in a PERF_RECORD_SAMPLE written with
 * sample_type (linux/perf_event.h lists the order), or -1 when absent. */
static int sample_offset(uint64_t sample_type, uint64_t field)
{
    static const uint64_t order[] = {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,     PERF_SAMPLE_TID,
                                     PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR,   PERF_SAMPLE_ID,
                                     PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,    PERF_SAMPLE_PERIOD,
                                     PERF_SAMPLE_WEIGHT,     PERF_SAMPLE_DATA_SRC};
    int off = (int)sizeof(struct perf_event_header);
    for (size_t i = 0; i < PD_ARRAY_LEN(order); i++) {
        if (order[i] == field)
            return sample_type & field ? off : -1;
        if (sample_type & order[i])
            off += 8;
    }
    return -1;
}

uint64_t pd_mem_ring_parse(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
                           uint64_t sample_type, int slot, pd_mem_stats *st)
{
    int addr_at = sample_offset(sample_type, PERF_SAMPLE_ADDR);
    while (head - tail >= sizeof(struct perf_event_header)) {
        struct perf_event_header h;
        ring_copy(&h, data, size, tail, sizeof h);
        if (h.size < sizeof h || h.size > size)
            return head; /* not a record boundary: the rest cannot be read */
        if (h.size > head - tail)
            break; /* not all written yet */
        uint64_t v;
        if (h.type == PERF_RECORD_SAMPLE) {
            st->samples++;
            uint64_t addr = 0;
            if (addr_at >= 0 && (size_t)addr_at + 8 <= h.size)
                ring_copy(&addr, data, size, tail + (uint64_t)addr_at, 8);
            if (addr && pd_sampler_record((uintptr_t)addr, slot))
                st->charged++;
            else
                st->outside++;
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            ring_copy(&v, data, size, tail + sizeof h + 8, 8); /* after the id */
            st->lost += v;
        } else {
            st->other++;
        }
        tail += h.size;
    }
    return tail;
}

/* ---- the kernel interface ------------------------------------------------------ */

static int sys_open(void *ctx, struct perf_event_attr *attr)
{
    (void)ctx;
    int fd = (int)syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

static void *sys_map(void *ctx, int fd, size_t len)
{
    (void)ctx;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0); /* writable: we write data_tail */
    return p == MAP_FAILED ? NULL : p;
}

static void sys_unmap(void *ctx, void *addr, size_t len)
{
    (void)ctx;
    munmap(addr, len);
}

static int sys_enable(void *ctx, int fd, int on)
{
    (void)ctx;
    return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static void sys_close(void *ctx, int fd)
{
    (void)ctx;
    close(fd);
}

static const pd_mem_ops sys_ops = {sys_open, sys_map, sys_unmap, sys_enable, sys_close, NULL};

/* ---- per-thread rings ------------------------------------------------------------- */

typedef struct thread_ring {
    struct thread_ring *next;
    int fd;
    void *map;
    size_t map_len;
    unsigned char *data;
    uint64_t data_size;
    int slot; /* the task the thread runs: its samples are charged to it */
    const char *failed; /* the call ring_open failed in */
} thread_ring;

/* One lock for the ring list, every ring's reading and the lifecycle: a
 * ring has one reader at a time (its thread at task boundaries, or the
 * drain thread), and a drain is short (at most one ring of records). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int running, stop_drain;
    int active;   /* rings of threads running a task: the drain thread sleeps at 0 */
    unsigned gen; /* start count: a thread's ring from an earlier start is gone */
    pthread_t drainer;
    const pd_mem_ops *ops;
    struct perf_event_attr attr; /* as probed */
    char name[40];
    thread_ring *rings;
    pd_mem_stats st;
} M = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .ops = &sys_ops};

static __thread struct {
    thread_ring *ring;
    unsigned gen;
    int failed; /* the open failed in this start: not tried again */
} T;

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

void pd_mem_sampler_set_ops(const pd_mem_ops *ops)
{
    pthread_mutex_lock(&M.lock);
    M.ops = ops ? ops : &sys_ops;
    pthread_mutex_unlock(&M.lock);
}

static size_t ring_map_len(void) { return (size_t)(1 + PD_MEM_RING_PAGES) * pd_page_size(); }

/* Opens and maps the event on the calling thread. 0, or -errno. */
static int ring_open(thread_ring *r)
{
    r->failed = "perf_event_open";
    r->fd = M.ops->open(M.ops->ctx, &M.attr);
    if (r->fd < 0)
        return r->fd;
    r->failed = "mmap";
    r->map_len = ring_map_len();
    r->map = M.ops->map(M.ops->ctx, r->fd, r->map_len);
    if (!r->map) {
        int e = errno ? errno : ENOMEM;
        M.ops->close(M.ops->ctx, r->fd);
        return -e;
    }
    struct perf_event_mmap_page *mp = r->map;
    /* data_offset/data_size exist since Linux 4.1; before, data follows the header page. */
    r->data_size = mp->data_size ? mp->data_size : (uint64_t)PD_MEM_RING_PAGES * pd_page_size();
    r->data = (unsigned char *)r->map + (mp->data_offset ? mp->data_offset : pd_page_size());
    r->slot = PD_SAMPLER_NO_TASK;
    return 0;
}

static void drain_locked(thread_ring *r)
{
    struct perf_event_mmap_page *mp = r->map;
    /* Acquire: the records before head are visible (the kernel's smp_rmb
     * after reading data_head). */
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    uint64_t end = pd_mem_ring_parse(r->data, r->data_size, tail, head, M.attr.sample_type, r->slot, &M.st);
    /* Release: our reads are done before the kernel may overwrite them (the
     * smp_mb before writing data_tail). */
    __atomic_store_n(&mp->data_tail, end, __ATOMIC_RELEASE);
}

static void ring_close_locked(thread_ring *r)
{
    M.ops->enable(M.ops->ctx, r->fd, 0);
    drain_locked(r);
    M.ops->unmap(M.ops->ctx, r->map, r->map_len);
    M.ops->close(M.ops->ctx, r->fd);
}

/* A thread that exits gives its ring back (OpenMP pools usually outlive
 * the runtime; pd_mem_sampler_stop closes theirs). */
static void on_thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&M.lock);
    if (T.ring && T.gen == M.gen && M.running) {
        for (thread_ring **p = &M.rings; *p; p = &(*p)->next) {
            if (*p == T.ring) {
                *p = T.ring->next;
                M.active -= T.ring->slot != PD_SAMPLER_NO_TASK;
                ring_close_locked(T.ring);
                free(T.ring);
                break;
            }
        }
    }
    T.ring = NULL;
    pthread_mutex_unlock(&M.lock);
}

static void make_exit_key(void) { pthread_key_create(&exit_key, on_thread_exit); }

/* The calling thread's ring, opened on first use in this start. */
static thread_ring *thread_ring_locked(void)
{
    if (T.gen != M.gen) {
        T.ring = NULL;
        T.failed = 0;
        T.gen = M.gen;
    }
    if (T.ring || T.failed)
        return T.ring;
    thread_ring *r = calloc(1, sizeof *r);
    int rc = r ? ring_open(r) : -ENOMEM;
    if (rc != 0) {
        T.failed = 1;
        if (M.st.open_failures++ == 0)
            rt_message("%s(%s) failed on a task thread (%s): that thread's accesses are not counted",
                       r ? r->failed : "calloc", M.name, strerror(-rc));
        free(r);
        return NULL;
    }
    r->next = M.rings;
    M.rings = r;
    M.st.threads++;
    T.ring = r;
    pthread_once(&exit_once, make_exit_key);
    pthread_setspecific(exit_key, &T); /* any non-NULL value: the destructor runs */
    return r;
}

void pd_mem_sampler_thread_begin(int slot)
{
    pthread_mutex_lock(&M.lock);
    thread_ring *r = M.running ? thread_ring_locked() : NULL;
    if (r) {
        drain_locked(r); /* nothing should be there (disabled between tasks) */
        if (r->slot == PD_SAMPLER_NO_TASK && M.active++ == 0)
            pthread_cond_signal(&M.wake);
        r->slot = slot;
        M.ops->enable(M.ops->ctx, r->fd, 1);
    }
    pthread_mutex_unlock(&M.lock);
}

void pd_mem_sampler_thread_end(void)
{
    pthread_mutex_lock(&M.lock);
    thread_ring *r = M.running && T.gen == M.gen ? T.ring : NULL;
    if (r) {
        M.ops->enable(M.ops->ctx, r->fd, 0); /* also flushes the PMU's own buffer into the ring */
        drain_locked(r);
        M.active -= r->slot != PD_SAMPLER_NO_TASK;
        r->slot = PD_SAMPLER_NO_TASK;
    }
    pthread_mutex_unlock(&M.lock);
}

static void *drain_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&M.lock);
    while (!M.stop_drain) {
        if (M.active == 0) {
            pthread_cond_wait(&M.wake, &M.lock);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += PD_MEM_DRAIN_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&M.wake, &M.lock, &until);
        for (thread_ring *r = M.rings; r && !M.stop_drain; r = r->next)
            if (r->slot != PD_SAMPLER_NO_TASK)
                drain_locked(r);
    }
    pthread_mutex_unlock(&M.lock);
    return NULL;
}

/* Why an open failed, in a user's words. */
static void explain(const char *call, int err, char *why, size_t whylen)
{
    int n = snprintf(why, whylen, "%s(%s): %s", call, M.name, strerror(err));
    if ((err != EACCES && err != EPERM) || n < 0 || (size_t)n >= whylen)
        return;
    if (strcmp(call, "perf_event_open") != 0) {
        snprintf(why + n, whylen - (size_t)n, " (the ring exceeds the locked-memory allowance: "
                 "/proc/sys/kernel/perf_event_mlock_kb, RLIMIT_MEMLOCK)");
        return;
    }
    char path[256];
    pd_proc_path(path, sizeof path, "sys/kernel/perf_event_paranoid");
    char *level = pd_read_file(path, NULL);
    snprintf(why + n, whylen - (size_t)n, "; %s is %s (sampling %s needs <= %d, or CAP_PERFMON)", path,
             level ? pd_trim(level) : "unreadable", M.attr.exclude_kernel ? "user space" : "with kernel mode",
             M.attr.exclude_kernel ? 2 : 1);
    free(level);
}

int pd_mem_sampler_start(const pd_mem_event *ev, uint64_t period, char *why, size_t whylen)
{
    pthread_mutex_lock(&M.lock);
    if (M.running) {
        pthread_mutex_unlock(&M.lock);
        snprintf(why, whylen, "already running");
        return -1;
    }
    snprintf(M.name, sizeof M.name, "%s", ev->name);
    memset(&M.st, 0, sizeof M.st);
    struct perf_event_attr *a = &M.attr;
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = ev->type;
    a->config = ev->config;
    a->config1 = ev->config1;
    a->config2 = ev->config2;
    a->sample_period = period ? period : PD_MEM_PERIOD;
    a->sample_type = PD_MEM_SAMPLE_TYPE;
    a->disabled = 1; /* enabled while a task runs */
    a->watermark = 1;
    a->wakeup_watermark = (uint32_t)((size_t)PD_MEM_RING_PAGES * pd_page_size() / 2); /* nobody waits: few wakeups */
    /* Most precise first; user space only unless the PMU cannot exclude the
     * kernel (IBS on older kernels), whose addresses then fall outside every
     * object and are dropped. */
    int err = EINVAL;
    thread_ring probe = {.failed = "perf_event_open"};
    for (int precise = ev->precise_max; precise >= ev->precise_min; precise--) {
        for (int excl = 1; excl >= (ev->kernel_ok ? 0 : 1); excl--) {
            a->precise_ip = (unsigned)precise;
            a->exclude_kernel = a->exclude_hv = (unsigned)excl;
            err = -ring_open(&probe);
            if (err != EINVAL && err != EOPNOTSUPP)
                goto probed;
        }
    }
probed:
    if (err) {
        explain(probe.failed, err, why, whylen);
        pthread_mutex_unlock(&M.lock);
        return -1;
    }
    M.ops->unmap(M.ops->ctx, probe.map, probe.map_len);
    M.ops->close(M.ops->ctx, probe.fd);
    M.gen++;
    M.stop_drain = 0;
    M.active = 0;
    int rc = pthread_create(&M.drainer, NULL, drain_main, NULL);
    if (rc != 0) {
        snprintf(why, whylen, "drain thread: %s", strerror(rc));
        pthread_mutex_unlock(&M.lock);
        return -1;
    }
    M.running = 1;
    pthread_mutex_unlock(&M.lock);
    return 0;
}

void pd_mem_sampler_stop(void)
{
    pthread_mutex_lock(&M.lock);
    if (!M.running) {
        pthread_mutex_unlock(&M.lock);
        return;
    }
    M.stop_drain = 1;
    pthread_cond_broadcast(&M.wake);
    pthread_mutex_unlock(&M.lock);
    pthread_join(M.drainer, NULL);
    pthread_mutex_lock(&M.lock);
    while (M.rings) {
        thread_ring *r = M.rings;
        M.rings = r->next;
        ring_close_locked(r);
        free(r);
    }
    M.running = 0;
    M.gen++; /* threads' ring pointers are stale now */
    pthread_mutex_unlock(&M.lock);
}

/* pthread_atfork (registered by the runtime with its own, after the page
 * sampler's lock): prepare takes the lock, so no ring is mid-read in the
 * copy. The child has no drain thread and its rings are the parent's
 * threads' events and ring pages (shared with the parent): it forgets them
 * without an ioctl or a data_tail write, which would change the parent's
 * sampling, and its sampler is off (pd_mem_sampler_start works again). */
void pd_mem_sampler_fork_prepare(void) { pthread_mutex_lock(&M.lock); }

void pd_mem_sampler_fork_parent(void) { pthread_mutex_unlock(&M.lock); }

void pd_mem_sampler_fork_child(void)
{
    while (M.rings) {
        thread_ring *r = M.rings;
        M.rings = r->next;
        M.ops->unmap(M.ops->ctx, r->map, r->map_len);
        M.ops->close(M.ops->ctx, r->fd);
        free(r);
    }
    M.running = M.stop_drain = M.active = 0;
    M.gen++;
    pthread_cond_init(&M.wake, NULL); /* its waiter, the drain thread, is gone */
    pthread_mutex_unlock(&M.lock);
}

int pd_mem_sampler_running(void)
{
    pthread_mutex_lock(&M.lock);
    int r = M.running;
    pthread_mutex_unlock(&M.lock);
    return r;
}

uint64_t pd_mem_sampler_period(void)
{
    pthread_mutex_lock(&M.lock);
    uint64_t p = M.running ? M.attr.sample_period : 0;
    pthread_mutex_unlock(&M.lock);
    return p;
}

void pd_mem_sampler_get_stats(pd_mem_stats *st)
{
    pthread_mutex_lock(&M.lock);
    *st = M.st;
    pthread_mutex_unlock(&M.lock);
}
