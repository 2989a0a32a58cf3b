/* libpaddiser-preload.so: starts the runtime when the library is loaded and
 * finalizes it at exit, with options from the environment (pd_init reads
 * PADDISER_BACKEND, PADDISER_FAST_CAPACITY, ... itself). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paddiser.h"
#include "common/util.h"
#include "preload/preload.h"

__thread int pdp_busy __attribute__((tls_model("initial-exec")));

static pdp_options options = {.min_bytes = 1u << 20, .sync_every = 1, .verbose = 0, .region_cost_pct = 10};

/* Hooks on any thread read it: 0 not started, 2 starting, 1 running,
 * -1 failed, finished, or a fork() child (whose runtime the parent keeps). */
enum { ST_NEW = 0, ST_RUNNING = 1, ST_STARTING = 2, ST_OFF = -1 };
static int state;

static void read_options(void)
{
    const char *v;
    long n;
    if ((v = getenv("PADDISER_RUN_MIN_BYTES")) && pd_parse_long(v, &n) && n > 0)
        options.min_bytes = (size_t)n;
    if ((v = getenv("PADDISER_RUN_SYNC_EVERY")) && pd_parse_long(v, &n) && n > 0 && n <= 1000000)
        options.sync_every = (int)n;
    if ((v = getenv("PADDISER_RUN_VERBOSE")) && pd_parse_long(v, &n))
        options.verbose = (int)n;
    if ((v = getenv("PADDISER_RUN_REGION_COST_PCT")) && pd_parse_long(v, &n) && n >= 0 && n <= 1000000)
        options.region_cost_pct = (int)n;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    options.keep_freed = pages > 0 && page > 0 ? (size_t)pages / 8 * (size_t)page : 0;
    if ((v = getenv("PADDISER_RUN_KEEP_FREED")) && pd_parse_long(v, &n) && n >= 0)
        options.keep_freed = (size_t)n;
}

const pdp_options *pdp_opts(void) { return &options; }

void pdp_log(int level, const char *fmt, ...)
{
    if (level > options.verbose)
        return;
    /* one write(2) per line: the ranks of an MPI job share a stderr */
    char line[600];
    int head = snprintf(line, sizeof line, "paddiser run: ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + head, sizeof line - (size_t)head - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)head + (n < 0 ? 0 : (size_t)n < sizeof line - (size_t)head - 1 ? (size_t)n : sizeof line - (size_t)head - 2);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

int pdp_running(void) { return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_RUNNING; }

/* The fork() child: the runtime turned itself off there (its own atfork
 * handler); the hooks pass through and forget the parent's blocks. */
static void forked_child(void)
{
    __atomic_store_n(&state, ST_OFF, __ATOMIC_RELEASE);
    pdp_alloc_forget();
}

static void start(void)
{
    int expect = ST_NEW;
    if (!__atomic_compare_exchange_n(&state, &expect, ST_STARTING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int was_busy = pdp_busy;
    pdp_busy = 1;
    read_options();
    pdp_alloc_setup();
    pthread_atfork(NULL, NULL, forked_child);
    pdp_out_setup();
    int rc = pd_init(NULL);
    if (rc != PD_OK)
        pdp_log(0, "runtime not started (%s); the program runs without placement", pd_strerror(rc));
    __atomic_store_n(&state, rc == PD_OK ? ST_RUNNING : ST_OFF, __ATOMIC_RELEASE);
    pdp_busy = was_busy;
}

int pdp_active(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == ST_NEW && !pdp_busy)
        start();
    return pdp_running();
}

int pdp_sync(void)
{
    int was_busy = pdp_busy;
    pdp_busy = 1;
    int rc = pd_sync_point();
    pdp_after_sync();
    pdp_busy = was_busy;
    return rc;
}

__attribute__((constructor)) static void preload_start(void) { start(); }

__attribute__((destructor)) static void preload_stop(void)
{
    int expect = ST_RUNNING;
    if (!__atomic_compare_exchange_n(&state, &expect, ST_OFF, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    /* From here on nothing new is registered; blocks freed meanwhile are
     * still unregistered (the runtime answers PD_ESTATE once finalized). */
    pdp_busy = 1;
    pdp_out_finish();
    pd_finalize();
}
