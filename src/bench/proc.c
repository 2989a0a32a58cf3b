#include "bench/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sigset_t saved_mask;
static bool blocked;
static volatile bool interrupted;
static int interrupt_sig; /* the first SIGINT/SIGTERM seen */

void pd_proc_block_signals(void)
{
    if (blocked)
        return;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGCHLD);
    sigprocmask(SIG_BLOCK, &s, &saved_mask);
    blocked = true;
}

void pd_proc_child_reset(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    if (blocked)
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

int pd_proc_wait_signal(double timeout_s)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGCHLD);
    if (timeout_s < 0)
        timeout_s = 0;
    struct timespec ts = {.tv_sec = (time_t)timeout_s,
                          .tv_nsec = (long)((timeout_s - floor(timeout_s)) * 1e9)};
    int sig = sigtimedwait(&s, NULL, &ts);
    if ((sig == SIGINT || sig == SIGTERM) && !interrupted) {
        interrupted = true;
        interrupt_sig = sig;
    }
    return sig > 0 ? sig : 0;
}

bool pd_proc_interrupted(void) { return interrupted; }

bool pd_proc_poll_interrupt(void)
{
    sigset_t pend;
    if (sigpending(&pend) == 0 && (sigismember(&pend, SIGINT) || sigismember(&pend, SIGTERM))) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGINT);
        sigaddset(&s, SIGTERM);
        struct timespec zero = {0, 0};
        int sig = sigtimedwait(&s, NULL, &zero);
        if (sig > 0 && !interrupted) {
            interrupted = true;
            interrupt_sig = sig;
        }
    }
    return interrupted;
}

int pd_proc_interrupt_status(void) { return 128 + (interrupt_sig ? interrupt_sig : SIGINT); }

/* true once pid has ended, without reaping it: its pid, and so its process
 * group id, cannot be reused before the group is killed. */
static bool ended_unreaped(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return si.si_pid == pid;
}

static int reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return st;
}

int pd_proc_stop_group(pid_t pid)
{
    kill(-pid, SIGTERM);
    kill(-pid, SIGCONT); /* a stopped process gets the SIGTERM too */
    double until = pd_monotonic() + PD_PROC_GRACE_S;
    /* scripts get a moment to run their exit traps */
    while (!ended_unreaped(pid) && pd_monotonic() < until)
        usleep(20000);
    kill(-pid, SIGKILL);
    return reap(pid);
}

/* Reads what fd has into dst (up to max bytes kept, 0: all); false at EOF. */
static bool drain(int fd, pd_str *dst, size_t max)
{
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0)
        return false;
    if (dst) {
        size_t keep = (size_t)n;
        if (max && dst->len + keep > max)
            keep = dst->len < max ? max - dst->len : 0;
        if (keep)
            pd_str_appendn(dst, buf, keep);
    }
    return true;
}

/* Waits for pid (its output on pipes[0..1], -1 when none), within deadline
 * and, unless uninterruptible, until SIGINT/SIGTERM. Returns 0 with *st, or
 * PD_PROC_TIMED_OUT / PD_PROC_INTERRUPTED after stopping its group. */
static int wait_child(pid_t pid, int pipes[2], pd_str *dst[2], size_t max, double deadline, bool uninterruptible,
                      int *st)
{
    int pidfd = pidfd_open(pid, 0); /* -1 (old kernel): poll in short steps instead */
    double ended_at = 0;
    int rc = 0;
    for (;;) {
        if (!ended_at && ended_unreaped(pid)) {
            ended_at = pd_monotonic();
            kill(-pid, SIGKILL); /* what it left running in its group */
        }
        bool open_pipes = pipes[0] >= 0 || pipes[1] >= 0;
        /* a pipe still held by something outside the group is not waited for long */
        if (ended_at && (!open_pipes || pd_monotonic() - ended_at > 1.0))
            break;
        if (!ended_at && !uninterruptible && pd_proc_poll_interrupt()) {
            rc = PD_PROC_INTERRUPTED;
            break;
        }
        if (!ended_at && pd_monotonic() >= deadline) {
            rc = PD_PROC_TIMED_OUT;
            break;
        }
        struct pollfd fds[3];
        int nfds = 0, idx[3];
        for (int i = 0; i < 2; i++)
            if (pipes[i] >= 0) {
                idx[nfds] = i;
                fds[nfds++] = (struct pollfd){.fd = pipes[i], .events = POLLIN};
            }
        if (pidfd >= 0 && !ended_at) {
            idx[nfds] = 2;
            fds[nfds++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        }
        /* signals are blocked, so poll is not woken by them: look every 100 ms */
        double left = deadline - pd_monotonic();
        int ms = pidfd >= 0 || ended_at ? 100 : 10;
        if (left * 1000 < ms)
            ms = left > 0 ? (int)(left * 1000) + 1 : 0;
        if (poll(fds, (nfds_t)nfds, ms) < 0) {
            usleep(10000); /* nothing was read: look again */
            continue;
        }
        for (int j = 0; j < nfds; j++) {
            int i = idx[j];
            if (i == 2 || !(fds[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (!drain(pipes[i], dst[i], max)) {
                close(pipes[i]);
                pipes[i] = -1;
            }
        }
    }
    if (pidfd >= 0)
        close(pidfd);
    for (int i = 0; i < 2; i++)
        if (pipes[i] >= 0) {
            close(pipes[i]);
            pipes[i] = -1;
        }
    *st = rc ? pd_proc_stop_group(pid) : reap(pid);
    return rc;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The message for a child that did not end by itself. */
static void stopped_message(int rc, const char *what, double timeout_s, char *err, size_t errlen)
{
    if (rc == PD_PROC_TIMED_OUT)
        snprintf(err, errlen, "%s did not finish within %g s: stopped (SIGTERM, then SIGKILL)", what, timeout_s);
    else if (rc == PD_PROC_INTERRUPTED)
        snprintf(err, errlen, "%s stopped: interrupted", what);
}

static int open_output(const char *path, char *err, size_t errlen)
{
    /* no link followed: a link planted in a repetition directory is not written through */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return fd;
}

int pd_proc_exec(char *const argv[], const pd_proc_opts *o, char *err, size_t errlen)
{
    int pipes[2][2] = {{-1, -1}, {-1, -1}}, files[2] = {-1, -1};
    const char *paths[2] = {o->out_path, o->err_path};
    pd_str *dst[2] = {o->out, o->errout};
    int rc = PD_PROC_ERROR;
    for (int i = 0; i < 2; i++) {
        if (paths[i] ? (files[i] = open_output(paths[i], err, errlen)) < 0 : pipe2(pipes[i], O_CLOEXEC) != 0) {
            if (!paths[i])
                snprintf(err, errlen, "pipe: %s", strerror(errno));
            goto out;
        }
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        pd_proc_child_reset();
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        for (int i = 0; i < 2; i++)
            dup2(files[i] >= 0 ? files[i] : pipes[i][1], i + 1);
        if (o->cwd && chdir(o->cwd) != 0) {
            dprintf(2, "cannot enter %s: %s\n", o->cwd, strerror(errno));
            _exit(126);
        }
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with a stop right after the fork */
    int readers[2];
    for (int i = 0; i < 2; i++) {
        if (pipes[i][1] >= 0)
            close(pipes[i][1]);
        pipes[i][1] = -1;
        readers[i] = pipes[i][0];
        pipes[i][0] = -1;
    }
    double deadline = o->timeout_s > 0 ? pd_monotonic() + o->timeout_s : INFINITY;
    int st;
    rc = wait_child(pid, readers, dst, o->max_capture, deadline, o->uninterruptible, &st);
    for (int i = 0; i < 2; i++)
        if (dst[i] && !paths[i])
            pd_str_append(dst[i], "");
    if (rc) {
        stopped_message(rc, base_name(argv[0]), o->timeout_s, err, errlen);
    } else if (st == -1) {
        snprintf(err, errlen, "waitpid: %s", strerror(errno));
        rc = PD_PROC_ERROR;
    } else if (WIFEXITED(st)) {
        rc = WEXITSTATUS(st);
        pd_str *e = o->errout;
        if (rc == 127 && e && e->data && strstr(e->data, "cannot run ")) {
            snprintf(err, errlen, "%s", pd_trim(e->data));
            rc = PD_PROC_ERROR;
        }
    } else {
        rc = 128 + WTERMSIG(st);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (files[i] >= 0)
            close(files[i]);
        for (int j = 0; j < 2; j++)
            if (pipes[i][j] >= 0)
                close(pipes[i][j]);
    }
    return rc;
}

int pd_proc_call(int (*fn)(void *), void *arg, char *err, size_t errlen)
{
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return PD_PROC_ERROR;
    }
    if (pid == 0) {
        pd_proc_child_reset();
        signal(SIGXFSZ, SIG_IGN); /* paddiser's own code: a failed write is said, not fatal */
        setpgid(0, 0);
        int rc = fn(arg);
        fflush(NULL);
        _exit(rc & 0xff);
    }
    setpgid(pid, pid);
    int none[2] = {-1, -1}, st;
    pd_str *dst[2] = {NULL, NULL};
    int rc = wait_child(pid, none, dst, 0, INFINITY, false, &st);
    if (rc)
        return rc;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
