/* GPFS (IBM Storage Scale) counters from mmpmon's fs_io_s request: per
 * mounted file system, on this node, cumulative since the mount. _br_/_bw_
 * count bytes read/written "from both disk and cache" (IBM's words), so like
 * the Lustre source and unlike NFS they include page-pool hits; _rdc_/_wc_
 * count read/write calls. mmpmon needs root.
 *
 * Cost: one mmpmon for the sampler's life, fed requests through a pipe (IBM
 * documents driving it from a pipe that never sends end of file), rather
 * than a process per sample; `mmpmon -r 0 -d MS` would also repeat by itself,
 * but on its own clock, so its answers would lag the sample by up to an
 * interval. Each sample writes "fs_io_s" and then "ver": the ver answer
 * marks the end of the fs_io_s answer, however many file systems it lists. */
#include "probe/io_fs.h"
#include "probe/sample.h"
#include "probe/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe/gpu_source.h"

extern char **environ;

#define MMPMON_MAX_ANSWER (4u << 20) /* an answer past this is no fs_io_s answer */

/* ---- parsing ---- */

/* Value after the keyword key ("_fs_") in the line [p, end): its start and
 * length, or NULL. Keywords and values alternate, blank-separated. */
static const char *field(const char *p, const char *end, const char *key, size_t *len)
{
    size_t kl = strlen(key);
    for (const char *q = p; q < end;) {
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        const char *w = q;
        while (q < end && *q != ' ' && *q != '\t')
            q++;
        if ((size_t)(q - w) == kl && memcmp(w, key, kl) == 0) {
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            const char *v = q;
            while (q < end && *q != ' ' && *q != '\t')
                q++;
            *len = (size_t)(q - v);
            return *len ? v : NULL;
        }
    }
    return NULL;
}

static bool field_u64(const char *p, const char *end, const char *key, unsigned long long *out)
{
    size_t n;
    const char *v = field(p, end, key, &n);
    if (!v)
        return false;
    const char *q = v;
    return pd_scan_u64(&q, out) && q == v + n;
}

void pd_gpfs_scan(pd_io_set *set, const char *out)
{
    for (const char *p = out; *p; p = pd_next_line(p)) {
        if (strncmp(p, "_fs_io_s_ ", 10) != 0)
            continue;
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        unsigned long long rc, v[4];
        size_t n;
        const char *fs = field(p, end, "_fs_", &n);
        if (!fs || !field_u64(p, end, "_rc_", &rc) || rc != 0 || !field_u64(p, end, "_br_", &v[0]) ||
            !field_u64(p, end, "_bw_", &v[1]) || !field_u64(p, end, "_rdc_", &v[2]) ||
            !field_u64(p, end, "_wc_", &v[3]))
            continue;
        for (size_t i = 0; i < set->ntargets; i++) {
            pd_io_target *t = &set->targets[i];
            if (t->kind == PD_IO_GPFS && !t->seen && strlen(t->match) == n && memcmp(t->match, fs, n) == 0) {
                memcpy(t->cur, v, sizeof v);
                t->seen = true;
                break;
            }
        }
    }
}

/* ---- resolution ---- */

const char *pd_gpfs_fsname(const char *source)
{
    if (strncmp(source, "/dev/", 5) == 0)
        return source + 5;
    return source;
}

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool pd_mmpmon_find(char *out, size_t len)
{
    const char *env = getenv("PADDISER_MMPMON");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return executable(out);
    }
    if (pd_gpu_find_in_path("mmpmon", out, len))
        return true;
    snprintf(out, len, "%s", "/usr/lpp/mmfs/bin/mmpmon");
    return executable(out);
}

/* ---- the mmpmon co-process ---- */

bool pd_mmpmon_start(pd_mmpmon *m, const char *path)
{
    int sv[2], pfd[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* The sampler blocks its stop signals; mmpmon should not inherit that. */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {(char *)path, "-p", "-s", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, path, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(sv[1]);
    close(pfd[1]);
    if (rc != 0) {
        close(sv[0]);
        close(pfd[0]);
        return false;
    }
    m->pid = pid;
    m->to_fd = sv[0];
    m->from_fd = pfd[0];
    m->len = 0;
    return true;
}

void pd_mmpmon_stop(pd_mmpmon *m)
{
    free(m->buf);
    m->buf = NULL;
    m->len = m->cap = 0;
    if (m->pid <= 0)
        return;
    close(m->to_fd); /* end of file: mmpmon exits */
    close(m->from_fd);
    int status;
    pid_t r = 0;
    for (int i = 0; i < 50 && (r = waitpid(m->pid, &status, WNOHANG)) == 0; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (r == 0) {
        kill(m->pid, SIGKILL);
        while (waitpid(m->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    m->pid = 0;
    m->to_fd = m->from_fd = -1;
}

static bool send_all(int fd, const char *s)
{
    for (size_t len = strlen(s), off = 0; off < len;) {
        ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        off += (size_t)n;
    }
    return true;
}

/* End of the line holding "_ver_ " at a line start in buf[0, len), or NULL. */
static char *ver_line_end(char *buf, size_t len)
{
    for (char *p = buf; p < buf + len;) {
        char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (!nl)
            return NULL;
        if (strncmp(p, "_ver_ ", 6) == 0)
            return nl + 1;
        p = nl + 1;
    }
    return NULL;
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *pd_mmpmon_query(pd_mmpmon *m, double timeout_s, const sigset_t *wait_mask)
{
    if (m->pid <= 0)
        return NULL;
    m->len = 0; /* the previous answer was handed out already */
    if (!send_all(m->to_fd, "fs_io_s\nver\n")) {
        pd_mmpmon_stop(m);
        return NULL;
    }
    double deadline = monotonic_s() + timeout_s;
    for (;;) {
        char *end = ver_line_end(m->buf, m->len);
        if (end) {
            *end = '\0'; /* nothing follows an answer: one request pair at a time */
            return m->buf;
        }
        if (m->cap - m->len < 4096) {
            size_t cap = m->cap ? m->cap * 2 : 16384;
            char *d = cap <= MMPMON_MAX_ANSWER ? realloc(m->buf, cap) : NULL;
            if (!d)
                break;
            m->buf = d;
            m->cap = cap;
        }
        double left = deadline - monotonic_s();
        if (left <= 0)
            break;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        struct pollfd p = {.fd = m->from_fd, .events = POLLIN};
        int pr = ppoll(&p, 1, &ts, wait_mask);
        if (pr <= 0)
            continue; /* a signal (the stop): keep waiting for this answer */
        ssize_t n = read(m->from_fd, m->buf + m->len, m->cap - m->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* mmpmon exited */
        m->len += (size_t)n;
    }
    pd_mmpmon_stop(m);
    return NULL;
}
