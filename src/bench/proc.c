#include "bench/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static sigset_t saved_mask;
static bool blocked;
static volatile bool interrupted;

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
    if (sig == SIGINT || sig == SIGTERM)
        interrupted = true;
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
        if (sigtimedwait(&s, NULL, &zero) > 0)
            interrupted = true;
    }
    return interrupted;
}

int pd_proc_run(char *const argv[], pd_str *out, pd_str *errout, char *err, size_t errlen)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(pe, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return -1;
    }
    if (pid == 0) {
        pd_proc_child_reset();
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    struct pollfd fds[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    pd_str *dst[2] = {out, errout};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                if (dst[i])
                    pd_str_appendn(dst[i], buf, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (out)
        pd_str_append(out, "");
    if (errout)
        pd_str_append(errout, "");
    if (WIFEXITED(st)) {
        if (WEXITSTATUS(st) == 127 && errout && strstr(errout->data, "cannot run ")) {
            snprintf(err, errlen, "%s", pd_trim(errout->data));
            return -1;
        }
        return WEXITSTATUS(st);
    }
    return 128 + WTERMSIG(st);
}
