/* perf_event_open features with a software fallback (see perf.h). */
#include "lib/perf.h"

#include <errno.h>
#include <math.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define CACHE_EV(cache, op, result) \
    ((uint64_t)(cache) | ((uint64_t)(op) << 8) | ((uint64_t)(result) << 16))

static const struct {
    uint32_t type;
    uint64_t config;
    const char *name;
} hw_events[PD_NEVENTS] = {
    [PD_EV_INSTRUCTIONS] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
    [PD_EV_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
    [PD_EV_LLC_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses"},
    [PD_EV_LLC_LOADS] = {PERF_TYPE_HW_CACHE,
                         CACHE_EV(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
                         "LLC-loads"},
    [PD_EV_LLC_LOAD_MISSES] = {PERF_TYPE_HW_CACHE,
                               CACHE_EV(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
                               "LLC-load-misses"},
    [PD_EV_L1D_PREFETCH_MISSES] = {PERF_TYPE_HW_CACHE,
                                   CACHE_EV(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_PREFETCH, PERF_COUNT_HW_CACHE_RESULT_MISS),
                                   "L1-dcache-prefetch-misses"},
    [PD_EV_STALLED_BACKEND] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "stalled-cycles-backend"},
    [PD_EV_BRANCH_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses"},
};

/* ---- perf_event_open source ----------------------------------------------- */

typedef struct {
    int fd[PD_NEVENTS];
} perf_handle;

static unsigned perf_usable_mask; /* events that opened during the probe */

static int perf_open(int e)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = hw_events[e].type;
    attr.config = hw_events[e].config;
    attr.exclude_kernel = 1; /* allowed at perf_event_paranoid <= 2 */
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void *perf_start(void *ctx)
{
    (void)ctx;
    perf_handle *h = malloc(sizeof *h);
    if (!h)
        return NULL;
    for (int e = 0; e < PD_NEVENTS; e++)
        h->fd[e] = (perf_usable_mask & (1u << e)) ? perf_open(e) : -1;
    return h;
}

static int perf_stop(void *ctx, void *handle, pd_hw_counts *out)
{
    (void)ctx;
    perf_handle *h = handle;
    memset(out, 0, sizeof *out);
    for (int e = 0; e < PD_NEVENTS; e++) {
        if (h->fd[e] < 0)
            continue;
        uint64_t v[3];
        if (read(h->fd[e], v, sizeof v) == (ssize_t)sizeof v && v[2] > 0) {
            /* Scale for multiplexing: value * enabled / running. */
            out->value[e] = v[1] == v[2] ? v[0] : (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]);
            out->valid |= 1u << e;
        }
        close(h->fd[e]);
    }
    free(h);
    return 0;
}

static const pd_counter_source perf_source = {"perf_event_open", perf_start, perf_stop, NULL};

/* ---- probe state ------------------------------------------------------------ */

static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;
static const pd_counter_source *injected;
static const pd_counter_source *active; /* NULL: software fallback */
static int probed;
static char reason[200];

static int probe_locked(void)
{
    active = NULL;
    reason[0] = '\0';
    if (injected) {
        active = injected;
        return 1;
    }
    const char *env = getenv("PADDISER_PERF");
    if (env && strcmp(env, "off") == 0) {
        snprintf(reason, sizeof reason, "hardware counters unavailable: disabled by PADDISER_PERF=off");
        return 0;
    }
    perf_usable_mask = 0;
    int first_errno = 0;
    for (int e = 0; e < PD_NEVENTS; e++) {
        int fd = perf_open(e);
        if (fd >= 0) {
            perf_usable_mask |= 1u << e;
            close(fd);
        } else if (e == PD_EV_INSTRUCTIONS) {
            first_errno = errno;
        }
    }
    /* Instructions normalise every other feature: without them, no hw path. */
    if (!(perf_usable_mask & (1u << PD_EV_INSTRUCTIONS)) || !(perf_usable_mask & (1u << PD_EV_CYCLES))) {
        snprintf(reason, sizeof reason, "hardware counters unavailable: perf_event_open(%s): %s",
                 hw_events[PD_EV_INSTRUCTIONS].name, strerror(first_errno ? first_errno : ENOENT));
        perf_usable_mask = 0;
        return 0;
    }
    active = &perf_source;
    return 1;
}

int pd_perf_init(void)
{
    pthread_mutex_lock(&perf_lock);
    if (!probed) {
        probe_locked();
        probed = 1;
    }
    int hw = active != NULL;
    pthread_mutex_unlock(&perf_lock);
    return hw;
}

const char *pd_perf_reason(void)
{
    pd_perf_init();
    return reason;
}

int pd_perf_hw_available(void) { return pd_perf_init(); }

void pd_perf_set_source(const pd_counter_source *src)
{
    pthread_mutex_lock(&perf_lock);
    injected = src;
    probe_locked();
    probed = 1;
    pthread_mutex_unlock(&perf_lock);
}

void pd_perf_fork_prepare(void) { pthread_mutex_lock(&perf_lock); }
void pd_perf_fork_release(void) { pthread_mutex_unlock(&perf_lock); }

/* ---- measurement -------------------------------------------------------------- */

static double (*_Atomic wall_clock)(void) = pd_monotonic;

void pd_perf_set_clock(double (*clock)(void)) { wall_clock = clock ? clock : pd_monotonic; }

double pd_perf_wall(void) { return wall_clock(); }

static void read_sw(pd_sw_counts *sw)
{
    struct timespec ts;
    struct rusage ru;
    memset(sw, 0, sizeof *sw);
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        sw->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        sw->page_faults = (double)ru.ru_minflt + (double)ru.ru_majflt;
        sw->ctx_switches = (double)ru.ru_nvcsw + (double)ru.ru_nivcsw;
    }
}

void pd_perf_begin(pd_perf_session *s)
{
    pd_perf_init();
    pthread_mutex_lock(&perf_lock);
    const pd_counter_source *src = active;
    pthread_mutex_unlock(&perf_lock);
    s->hw = src ? src->start(src->ctx) : NULL;
    read_sw(&s->sw0);
    s->wall0 = wall_clock();
}

void pd_perf_end(pd_perf_session *s, pd_perf_sample *out)
{
    double now = wall_clock();
    pd_sw_counts sw1;
    read_sw(&sw1);
    memset(out, 0, sizeof *out);
    out->wall_s = now - s->wall0;
    out->sw.cpu_s = sw1.cpu_s - s->sw0.cpu_s;
    out->sw.page_faults = sw1.page_faults - s->sw0.page_faults;
    out->sw.ctx_switches = sw1.ctx_switches - s->sw0.ctx_switches;
    if (s->hw) {
        pthread_mutex_lock(&perf_lock);
        const pd_counter_source *src = active;
        pthread_mutex_unlock(&perf_lock);
        if (src && src->stop(src->ctx, s->hw, &out->hw) == 0)
            out->hw_used = (out->hw.valid & (1u << PD_EV_INSTRUCTIONS)) != 0;
        s->hw = NULL;
    }
}

void pd_perf_sample_add(pd_perf_sample *a, const pd_perf_sample *b)
{
    a->wall_s += b->wall_s;
    a->sw.cpu_s += b->sw.cpu_s;
    a->sw.page_faults += b->sw.page_faults;
    a->sw.ctx_switches += b->sw.ctx_switches;
    if (b->hw_used) {
        for (int e = 0; e < PD_NEVENTS; e++)
            a->hw.value[e] += b->hw.value[e];
        a->hw.valid = a->hw_used ? (a->hw.valid & b->hw.valid) : b->hw.valid;
        a->hw_used = 1;
    }
}

static double per_kilo(const pd_hw_counts *c, int e, double kinstr)
{
    return (c->valid & (1u << e)) && kinstr > 0 ? (double)c->value[e] / kinstr : 0.0;
}

void pd_perf_features(const pd_perf_sample *s, double sampled_accesses, double feat[PD_NFEATURES])
{
    memset(feat, 0, sizeof(double) * PD_NFEATURES);
    if (s->hw_used) {
        const pd_hw_counts *c = &s->hw;
        double kinstr = (double)c->value[PD_EV_INSTRUCTIONS] / 1000.0;
        double cycles = (c->valid & (1u << PD_EV_CYCLES)) ? (double)c->value[PD_EV_CYCLES] : 0.0;
        feat[PD_FEAT_LLC_MPKI] = per_kilo(c, PD_EV_LLC_MISSES, kinstr);
        feat[PD_FEAT_IPC] = cycles > 0 ? (double)c->value[PD_EV_INSTRUCTIONS] / cycles : 0.0;
        feat[PD_FEAT_PRF_MISS] = per_kilo(c, PD_EV_L1D_PREFETCH_MISSES, kinstr);
        feat[PD_FEAT_MEM_WCY] = cycles > 0 && (c->valid & (1u << PD_EV_STALLED_BACKEND))
                                    ? (double)c->value[PD_EV_STALLED_BACKEND] / cycles : 0.0;
        feat[PD_FEAT_L2_LD_MISS] = per_kilo(c, PD_EV_LLC_LOADS, kinstr);
        feat[PD_FEAT_BR_MSP] = per_kilo(c, PD_EV_BRANCH_MISSES, kinstr);
        feat[PD_FEAT_VEC_INS] = 0.0; /* no generic perf event for vector instructions */
        feat[PD_FEAT_L3_LD_MISS] = per_kilo(c, PD_EV_LLC_LOAD_MISSES, kinstr);
        return;
    }
    /* Software proxies: memory intensity from the sampler, CPU use, faults. */
    double cpu_ms = s->sw.cpu_s * 1e3;
    double wall_ms = s->wall_s * 1e3;
    double intensity = cpu_ms > 0 ? sampled_accesses / cpu_ms : 0.0;
    double util = s->wall_s > 0 ? s->sw.cpu_s / s->wall_s : 0.0;
    if (util > 1.0)
        util = 1.0;
    feat[PD_FEAT_LLC_MPKI] = intensity;
    feat[PD_FEAT_IPC] = util;
    feat[PD_FEAT_MEM_WCY] = 1.0 - util;
    feat[PD_FEAT_L2_LD_MISS] = cpu_ms > 0 ? s->sw.page_faults / cpu_ms : 0.0;
    feat[PD_FEAT_BR_MSP] = wall_ms > 0 ? s->sw.ctx_switches / wall_ms : 0.0;
    feat[PD_FEAT_L3_LD_MISS] = intensity;
}

void pd_perf_model_inputs(const pd_perf_sample *s, double in[PD_NFEATURES])
{
    for (int i = 0; i < PD_NFEATURES; i++)
        in[i] = NAN;
    if (!s->hw_used)
        return;
    double f[PD_NFEATURES];
    pd_perf_features(s, 0, f);
    unsigned v = s->hw.valid;
    const struct {
        int feat;
        unsigned need; /* events the feature is computed from */
    } deps[] = {
        {PD_FEAT_LLC_MPKI, 1u << PD_EV_LLC_MISSES},
        {PD_FEAT_IPC, 1u << PD_EV_CYCLES},
        {PD_FEAT_PRF_MISS, 1u << PD_EV_L1D_PREFETCH_MISSES},
        {PD_FEAT_MEM_WCY, (1u << PD_EV_STALLED_BACKEND) | (1u << PD_EV_CYCLES)},
        {PD_FEAT_L2_LD_MISS, 1u << PD_EV_LLC_LOADS},
        {PD_FEAT_BR_MSP, 1u << PD_EV_BRANCH_MISSES},
        {PD_FEAT_L3_LD_MISS, 1u << PD_EV_LLC_LOAD_MISSES},
    }; /* VEC_INS: no generic event, always missing */
    for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++)
        if ((v & deps[i].need) == deps[i].need)
            in[deps[i].feat] = f[deps[i].feat];
}
