/* How long a SIGSEGV handler the application installs while a task runs
 * (after pd_init, all samples armed) waits before the sampler notices it
 * and stops sampling (docs/runtime.md, "fork() and foreign SIGSEGV
 * handlers"). Each run: pd_init, a 1 MiB object, pd_task_begin, a pause of
 * 0-12 ms (so the install falls anywhere in a tick), sigaction, then
 * pd_profile_info polled every 100 us until sampling is 0. Prints the mean
 * and maximum. Timings: a benchmark, not a test.
 *   make bench-handler-window [HANDLER_WINDOW_ARGS=RUNS]   (default 20; the
 *   period is PADDISER_SAMPLE_PERIOD_MS, default 10) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/util.h"
#include "paddiser.h"

#define BYTES (1u << 20)

static void app_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 20;
    if (runs < 1) {
        fprintf(stderr, "usage: %s [RUNS >= 1]\n", argv[0]);
        return 2;
    }
    unsigned char *buf = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED)
        return 1;
    memset(buf, 0, BYTES);
    double sum = 0, worst = 0;
    for (int r = 0; r < runs; r++) {
        pd_options o;
        pd_options_default(&o);
        o.backend = PD_BACKEND_NONE;
        if (pd_init(&o) != PD_OK || pd_object_register("buf", buf, BYTES, NULL) < 0 || pd_task_begin(0) != PD_OK) {
            fprintf(stderr, "handler_window: runtime set-up failed\n");
            return 1;
        }
        usleep(3000 * (r % 5));
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = app_handler;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, &old);
        double t0 = pd_monotonic();
        pd_profile_info info;
        while (pd_profile_info_get(&info) == PD_OK && info.sampling)
            usleep(100);
        double d = pd_monotonic() - t0;
        sum += d;
        worst = d > worst ? d : worst;
        pd_task_end(0);
        pd_finalize();
        sigaction(SIGSEGV, &old, NULL);
    }
    const char *period = getenv("PADDISER_SAMPLE_PERIOD_MS");
    printf("handler noticed after: mean %.1f ms, max %.1f ms (%d runs, PADDISER_SAMPLE_PERIOD_MS=%s)\n",
           sum / runs * 1e3, worst * 1e3, runs, period && *period ? period : "10 (default)");
    return 0;
}
