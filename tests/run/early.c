/* tests/run_threads.sh: a library whose constructor starts a thread that
 * allocates before libpaddiser-preload.so's constructor has started the
 * runtime, and goes on after it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_t thread;
static volatile int stop;
static unsigned long long early_sum;

static void *churn(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; !stop || i < 50; i++) {
        size_t n = ((i % 3) + 1) << 20;
        unsigned char *p = malloc(n);
        unsigned char *q = malloc(32 + i % 100);
        if (!p || !q)
            abort();
        memset(p, (int)(i & 0xff), n);
        early_sum += p[n - 1];
        free(q);
        free(p);
    }
    return NULL;
}

__attribute__((constructor)) static void early_start(void) { pthread_create(&thread, NULL, churn, NULL); }

unsigned long long early_stop(void)
{
    stop = 1;
    pthread_join(thread, NULL);
    return early_sum > 0;
}
