/* Local executor: `bash run_<script>.sh` in each repetition directory, with
 * stdout/stderr files, up to `parallel` at once. Each child leads its own
 * process group so a cancel, a timeout or the end of the script reaches
 * everything the script started. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/proc.h"
#include "bench/run.h"

static pid_t start_task(const pd_bench_run *run, const pd_bench_task *t)
{
    pid_t pid = fork();
    if (pid > 0)
        setpgid(pid, pid); /* also here: the group exists before any kill of it */
    if (pid != 0)
        return pid;
    pd_proc_child_reset();
    setpgid(0, 0);
    if (chdir(t->dir) != 0) {
        dprintf(2, "paddiser bench: cannot enter %s: %s\n", t->dir, strerror(errno));
        _exit(126);
    }
    int in = open("/dev/null", O_RDONLY);
    /* O_NOFOLLOW: a link planted in the repetition directory is not written through */
    int out = open("stdout", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    int err = open("stderr", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (in < 0 || out < 0 || err < 0) {
        dprintf(2, "paddiser bench: cannot open stdout/stderr in %s: %s\n", t->dir, strerror(errno));
        _exit(126);
    }
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    close(in);
    close(out);
    close(err);
    execlp("bash", "bash", pd_bench_task_script(run, t), (char *)NULL);
    dprintf(2, "paddiser bench: cannot run bash: %s\n", strerror(errno));
    _exit(127);
}

/* true when t's child has ended: *st is its wait status, or -1 when it was
 * gone already (ECHILD: nothing is left to wait for, never wait forever).
 * What the script left running in its process group is killed first, while
 * the unreaped child still holds the group's id. */
static bool child_ended(pd_bench_task *t, int *st)
{
    siginfo_t si = {0};
    if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
        *st = -1; /* ECHILD: not ours to wait for, nor its group to kill */
        return true;
    }
    if (si.si_pid != (pid_t)t->pid)
        return false;
    kill(-(pid_t)t->pid, SIGKILL);
    if (waitpid((pid_t)t->pid, st, 0) != (pid_t)t->pid)
        *st = -1;
    return true;
}

static bool is_running(const pd_bench_task *t) { return t->state == PD_TASK_RUNNING && t->pid > 0; }

static void cancel_running(pd_bench_run *run, void *ctx)
{
    for (size_t k = 0; k < run->ntasks; k++)
        if (is_running(&run->tasks[k]))
            kill(-(pid_t)run->tasks[k].pid, SIGTERM);
    /* Give scripts a moment to run their exit traps, then force. */
    double until = pd_monotonic() + PD_PROC_GRACE_S;
    for (;;) {
        bool any = false, late = pd_monotonic() >= until;
        for (size_t k = 0; k < run->ntasks; k++) {
            pd_bench_task *t = &run->tasks[k];
            int st;
            if (!is_running(t))
                continue;
            bool ended = late;
            if (late) {
                kill(-(pid_t)t->pid, SIGKILL);
                if (waitpid((pid_t)t->pid, &st, 0) != (pid_t)t->pid)
                    st = -1;
            } else {
                ended = child_ended(t, &st);
            }
            if (ended) {
                t->pid = 0;
                t->exit_code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                t->state = PD_TASK_CANCELLED;
                pd_bench_task_finished(run, t);
            } else {
                any = true;
            }
        }
        if (!any)
            return;
        usleep(50000);
    }
}

/* Field 22 of /proc/<pid>/stat, the process's start time (clock ticks
 * since boot): with the pid it names one process, not a later one given the
 * same pid. false when pid is gone or a zombie (its group can no longer be
 * told apart from a reused id's). */
static bool proc_start_time(long pid, unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name (field 2) may hold anything */
    char state;
    if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                     &state, start) != 2)
        return false;
    return state != 'Z' && state != 'X';
}

/* __paddiser_launch.json: what a repetition's attempt started (its process
 * group, the leader's pid and start time, the host), so a --resume after the
 * harness was killed can find and end it (pd_bench_end_local_attempt). */
static void record_launch(const pd_bench_task *t, pid_t pid)
{
    unsigned long long start = 0;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    bool known = proc_start_time(pid, &start);
    json_t *o = known ? json_pack("{s:s, s:I, s:I, s:I}", "host", host, "pgid", (json_int_t)pid, "pid",
                                  (json_int_t)pid, "start_time", (json_int_t)start)
                      : NULL;
    char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
    json_decref(o);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__paddiser_launch.json", t->dir);
    if (!text || !known || pd_write_file_atomic(path, text, strlen(text)) != 0)
        fprintf(stderr, "paddiser bench: warning: cannot record exec_%04d rep %d's process group in %s%s%s: a "
                        "--resume after a kill -9 of paddiser will not find it\n", t->exec_id, t->repetition, path,
                known ? ": " : "", known ? strerror(errno) : "");
    free(text);
}

void pd_bench_end_local_attempt(const pd_bench_task *t)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__paddiser_launch.json", t->dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* a planted link is not read through */
    if (fd < 0)
        return; /* no attempt recorded (never started, or started by an older paddiser) */
    json_error_t e;
    json_t *o = json_loadfd(fd, 0, &e);
    close(fd);
    const char *host = json_string_value(json_object_get(o, "host"));
    json_int_t pgid = json_integer_value(json_object_get(o, "pgid"));
    json_int_t pid = json_integer_value(json_object_get(o, "pid"));
    json_int_t start = json_integer_value(json_object_get(o, "start_time"));
    char here[256] = "";
    if (gethostname(here, sizeof here - 1) != 0)
        here[0] = '\0';
    if (!host || pgid <= 1 || pid <= 1 || start <= 0) {
        fprintf(stderr, "paddiser bench: warning: %s is unreadable; exec_%04d rep %d's previous attempt cannot be "
                        "checked\n", path, t->exec_id, t->repetition);
    } else if (strcmp(host, here) != 0) {
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: its previous attempt ran on host %s (process group %lld), "
                        "which cannot be checked from %s: it may still be running there\n",
                t->exec_id, t->repetition, host, (long long)pgid, here);
    } else {
        unsigned long long now_start;
        if (proc_start_time((long)pid, &now_start) && now_start == (unsigned long long)start) {
            fprintf(stderr, "paddiser bench: exec_%04d rep %d: its previous attempt (process group %lld) is still "
                            "running; ending it before the repetition runs again\n",
                    t->exec_id, t->repetition, (long long)pgid);
            kill(-(pid_t)pgid, SIGTERM);
            double until = pd_monotonic() + PD_PROC_GRACE_S;
            while (pd_monotonic() < until && proc_start_time((long)pid, &now_start) &&
                   now_start == (unsigned long long)start)
                usleep(20000);
            /* what ignored the SIGTERM, the leader or what it left in its group */
            kill(-(pid_t)pgid, SIGKILL);
            until = pd_monotonic() + 2.0;
            while (pd_monotonic() < until && proc_start_time((long)pid, &now_start) &&
                   now_start == (unsigned long long)start)
                usleep(20000);
        }
    }
    json_decref(o);
}

static int start_local(pd_bench_run *run, pd_bench_task *t, void *ctx)
{
    pid_t pid = start_task(run, t);
    if (pid < 0) {
        fprintf(stderr, "paddiser bench: fork: %s\n", strerror(errno));
        return -1;
    }
    record_launch(t, pid);
    t->pid = pid;
    t->started_mono = pd_monotonic();
    t->term_sent = 0;
    return 0;
}

/* benchmark.timeout: SIGTERM to the group of a task past it, SIGKILL
 * PD_PROC_GRACE_S later. Returns the seconds until the next such step. */
static double enforce_timeouts(pd_bench_run *run)
{
    double timeout = run->cfg.timeout_s, next = 1.0, now = pd_monotonic();
    if (timeout <= 0)
        return next;
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (!is_running(t))
            continue;
        double left = t->term_sent ? t->term_sent + PD_PROC_GRACE_S - now : t->started_mono + timeout - now;
        if (left <= 0) {
            kill(-(pid_t)t->pid, t->term_sent ? SIGKILL : SIGTERM);
            if (!t->term_sent)
                t->term_sent = now;
            left = t->term_sent + PD_PROC_GRACE_S - now;
            if (left <= 0)
                left = 0.1; /* SIGKILLed: reaped on the next look */
        }
        if (left < next)
            next = left;
    }
    return next;
}

/* Reaps whatever finished; sleeps until a child exits, a timeout step is
 * due, or Ctrl-C. */
static void reap_finished(pd_bench_run *run, int *running, void *ctx)
{
    bool reaped = false;
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        int st;
        if (!is_running(t) || !child_ended(t, &st))
            continue;
        t->pid = 0;
        t->end = pd_now();
        if (st == -1) {
            t->exit_code = -1;
            t->state = PD_TASK_FAILED;
        } else if (WIFEXITED(st)) {
            t->exit_code = WEXITSTATUS(st);
            t->state = t->exit_code == 0 ? PD_TASK_SUCCEEDED : PD_TASK_FAILED;
        } else {
            t->exit_code = 128 + WTERMSIG(st);
            t->state = PD_TASK_FAILED;
        }
        if (t->term_sent) /* whatever it did once the timeout's SIGTERM came */
            t->state = PD_TASK_TIMED_OUT;
        (*running)--;
        reaped = true;
        pd_bench_task_finished(run, t);
    }
    if (!reaped)
        pd_proc_wait_signal(enforce_timeouts(run));
}

int pd_exec_local(pd_bench_run *run, int parallel)
{
    pd_executor ex = {.start = start_local, .collect = reap_finished, .cancel = cancel_running};
    return pd_exec_run(run, parallel, &ex);
}
