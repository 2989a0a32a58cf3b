/* libpaddiser-preload.so: starts the runtime when the library is loaded and
 * finalizes it at exit, with options from the environment (pd_init reads
 * PADDISER_BACKEND, PADDISER_FAST_CAPACITY, ... itself). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paddiser.h"
#include "common/util.h"
#include "preload/preload.h"

__thread int pdp_busy;

static pdp_options options = {.min_bytes = 1u << 20, .sync_every = 1, .verbose = 0};
static int state; /* 0 not started, 1 running, -1 failed or finished */

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
}

const pdp_options *pdp_opts(void) { return &options; }

void pdp_log(int level, const char *fmt, ...)
{
    if (level > options.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("paddiser run: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int pdp_active(void)
{
    if (state != 0 || pdp_busy)
        return state == 1;
    pdp_busy = 1;
    state = -1;
    read_options();
    int rc = pd_init(NULL);
    if (rc == PD_OK)
        state = 1;
    else
        pdp_log(0, "runtime not started (%s); the program runs without placement", pd_strerror(rc));
    pdp_busy = 0;
    return state == 1;
}

__attribute__((constructor)) static void preload_start(void) { (void)pdp_active(); }

__attribute__((destructor)) static void preload_stop(void)
{
    if (state != 1)
        return;
    pdp_busy = 1;
    state = -1;
    pd_finalize();
}
