/* tests/run_threads.sh: threads allocating concurrently (one started by a
 * library constructor before the runtime, eight after), fork() while they
 * run, a fork() child that allocates without exec, and a fork()+exec of
 * this program. Prints the same under paddiser run as without it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1u << 20)
#define NTHREADS 8

unsigned long long early_stop(void);

static unsigned long long work(unsigned seed, int rounds)
{
    unsigned long long sum = 0;
    for (int i = 0; i < rounds; i++) {
        size_t n = (size_t)(1 + (seed + i) % 3) * MIB;
        unsigned char *a = malloc(n), *b = calloc(1, n / 2), *s = malloc(48);
        if (!a || !b || !s)
            abort();
        memset(a, (int)(seed + i) & 0xff, n);
        a = realloc(a, n + MIB);
        if (!a)
            abort();
        memset(a + n, 1, MIB);
        char *m = mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            abort();
        m[0] = 2;
        sum += a[0] + a[n] + b[n / 4] + (unsigned char)m[0];
        munmap(m, 2 * MIB);
        free(s);
        free(b);
        free(a);
    }
    return sum;
}

static unsigned long long results[NTHREADS];

static void *thread_main(void *arg)
{
    long t = (long)arg;
    results[t] = work((unsigned)t, 20);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) { /* the exec'd child */
        printf("exec child: %llu\n", work(7, 5));
        return 0;
    }
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)t);
    /* fork() while the threads allocate: the child allocates large blocks
     * too (a lock held by another thread at the fork would hang it). */
    int forks_ok = 0;
    for (int f = 0; f < 10; f++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(work(3, 3) > 0 ? 3 : 4);
        int st;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3)
            forks_ok++;
    }
    unsigned long long total = 0;
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        total += results[t];
    }
    printf("threads: %llu\nforks: %d of 10\nearly thread: %llu\n", total, forks_ok, early_stop());
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("exec: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
