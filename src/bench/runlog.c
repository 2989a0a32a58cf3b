/* The run's log file (runlog.h). */
#include "bench/runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/iops_meta.h"
#include "paddiser.h"

struct pd_runlog {
    int fd;
    int level;
    char path[PATH_MAX];
};

static const char *const level_names[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};

bool pd_log_level_parse(const char *name, int *level)
{
    for (int i = 0; i < (int)PD_ARRAY_LEN(level_names); i++)
        if (!strcasecmp(name, level_names[i])) {
            *level = i;
            return true;
        }
    return false;
}

const char *pd_log_level_name(int level)
{
    return level >= 0 && level < (int)PD_ARRAY_LEN(level_names) ? level_names[level] : "INFO";
}

static void local_time(char *buf, size_t len, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!localtime_r(&s, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, len, "%.0f", t);
}

/* One write per line: O_APPEND keeps lines whole even with two writers. */
static void write_line(struct pd_runlog *log, int level, const char *msg)
{
    char when[32];
    local_time(when, sizeof when, pd_now());
    pd_str s = {0};
    pd_str_printf(&s, "%s | %-5s | %s\n", when, pd_log_level_name(level), msg);
    if (s.data && write(log->fd, s.data, s.len) != (ssize_t)s.len) {
        /* a full disk: said once, and the run goes on without its log */
        fprintf(stderr, "paddiser bench: warning: cannot write the log %s: %s; logging stops\n", log->path,
                strerror(errno));
        close(log->fd);
        log->fd = -1;
    }
    pd_str_free(&s);
}

/* force: the invocation's frame (version, host, command line, start and
 * end), written whatever --log-level says. */
static void vlog(pd_bench_run *run, int level, bool force, const char *fmt, va_list ap)
{
    struct pd_runlog *log = run->log;
    if (!log || log->fd < 0 || (level < log->level && !force))
        return;
    pd_str s = {0};
    pd_str_vprintf(&s, fmt, ap);
    if (s.data)
        write_line(log, level, s.data);
    pd_str_free(&s);
}

void pd_runlog(pd_bench_run *run, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(run, level, false, fmt, ap);
    va_end(ap);
}

static void frame(pd_bench_run *run, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void frame(pd_bench_run *run, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(run, level, true, fmt, ap);
    va_end(ap);
}

/* A word of the command line as a shell would take it back. */
static void append_quoted(pd_str *s, const char *w)
{
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == strlen(w)) {
        pd_str_append(s, w);
        return;
    }
    pd_str_append(s, "'");
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            pd_str_append(s, "'\\''");
        else
            pd_str_appendn(s, p, 1);
    }
    pd_str_append(s, "'");
}

/* Created exclusively without following a link; an existing regular file
 * (not a link: O_NOFOLLOW) is appended to. O_NONBLOCK so that a FIFO in
 * its place does not hang the run; anything but a regular file is refused. */
static int open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

int pd_runlog_open(pd_bench_run *run, const char *config_path, bool resume, double started)
{
    struct pd_runlog *log = calloc(1, sizeof *log);
    if (!log) {
        fprintf(stderr, "paddiser bench: out of memory\n");
        return -1;
    }
    log->level = run->ctl.log_level_set ? run->ctl.log_level : PD_LOG_INFO;
    int n = run->ctl.log_file ? snprintf(log->path, sizeof log->path, "%s", run->ctl.log_file)
                              : pd_path_join(log->path, sizeof log->path, run->run_dir, PD_RUNLOG_DEFAULT_NAME);
    if (n < 0 || (size_t)n >= sizeof log->path) {
        fprintf(stderr, "paddiser bench: the log file's path is too long; nothing was run\n");
        free(log);
        return -1;
    }
    if ((log->fd = open_log(log->path)) < 0) {
        int e = errno;
        if (e == ELOOP)
            fprintf(stderr, "paddiser bench: cannot create the log %s: it is a symbolic link; nothing was run\n",
                    log->path);
        else
            fprintf(stderr, "paddiser bench: cannot create the log %s: %s; nothing was run\n", log->path,
                    e == EINVAL || e == ENXIO ? "not a regular file" : strerror(e)); /* ENXIO: a FIFO */
        free(log);
        return -1;
    }
    run->log = log;

    char host[256] = "", when[32];
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    local_time(when, sizeof when, started);
    pd_str cmd = {0};
    for (int i = 0; i < run->ctl.argc; i++) {
        if (i)
            pd_str_append(&cmd, " ");
        append_quoted(&cmd, run->ctl.argv[i]);
    }
    char cwd[PATH_MAX];
    frame(run, PD_LOG_INFO, "==== paddiser bench %s%s", pd_version(), resume ? " (--resume)" : "");
    frame(run, PD_LOG_INFO, "host: %s, pid %ld", host, (long)getpid());
    frame(run, PD_LOG_INFO, "command line: paddiser %s", cmd.data ? cmd.data : "bench");
    frame(run, PD_LOG_INFO, "working directory: %s", getcwd(cwd, sizeof cwd) ? cwd : "(unknown)");
    frame(run, PD_LOG_INFO, "study: %s (%s)", run->cfg.name ? run->cfg.name : "", config_path);
    frame(run, PD_LOG_INFO, "run directory: %s", run->run_dir);
    frame(run, PD_LOG_INFO, "%zu executions x %d repetitions = %zu runs, executor %s, parallel %d",
              run->matrix.nexecs, run->cfg.repetitions, run->ntasks, run->executor_name, run->cfg.parallel);
    if (run->ctl.max_fail)
        pd_runlog(run, PD_LOG_INFO, "stops after %ld failed repetition%s (%s)", run->ctl.max_fail,
                  run->ctl.max_fail == 1 ? "" : "s", run->ctl.max_fail == 1 ? "--fail-fast" : "--max-fail");
    if (run->ctl.missing_metric_fails)
        pd_runlog(run, PD_LOG_INFO, "a missing metric fails its repetition (--fail-on-missing-metric)");
    frame(run, PD_LOG_INFO, "started: %s", when);
    pd_str_free(&cmd);
    return 0;
}

static const char *task_what(const pd_bench_task *t)
{
    return pd_iops_status_name(t->state);
}

void pd_runlog_task_started(pd_bench_run *run, const pd_bench_task *t)
{
    pd_runlog(run, PD_LOG_INFO, "exec_%04d rep %d/%d started", t->exec_id, t->repetition, run->cfg.repetitions);
    pd_runlog(run, PD_LOG_DEBUG, "exec_%04d rep %d: %s/%s", t->exec_id, t->repetition, t->dir,
              pd_bench_task_script(run, t));
}

void pd_runlog_task_finished(pd_bench_run *run, const pd_bench_task *t)
{
    pd_str m = {0};
    /* the first metrics, as IOPS's per-test line shows them */
    size_t shown = 0, have = 0;
    for (size_t k = 0; t->metrics && k < run->cfg.nmetrics; k++) {
        if (!t->metrics[k])
            continue;
        if (shown < 3) {
            pd_str_printf(&m, "%s%s=%s", shown ? ", " : " | ", run->cfg.metrics[k], t->metrics[k]);
            shown++;
        }
        have++;
    }
    if (have > shown)
        pd_str_printf(&m, ", ... (%zu total)", have);
    char why[160] = "";
    if (t->error)
        snprintf(why, sizeof why, " (%s)", t->error);
    else if (t->state == PD_TASK_FAILED && t->exit_code >= 0)
        snprintf(why, sizeof why, " (exit %d)", t->exit_code);
    double dur = t->start > 0 && t->end >= t->start ? t->end - t->start : 0;
    int level = t->state == PD_TASK_SUCCEEDED ? PD_LOG_INFO : PD_LOG_WARNING;
    pd_runlog(run, level, "exec_%04d rep %d/%d %s%s in %.3f s%s", t->exec_id, t->repetition, run->cfg.repetitions,
              task_what(t), why, dur, m.data ? m.data : "");
    if (t->state != PD_TASK_SUCCEEDED)
        pd_runlog(run, PD_LOG_DEBUG, "exec_%04d rep %d: see %s/stderr", t->exec_id, t->repetition, t->dir);
    pd_str_free(&m);
}

void pd_runlog_close(pd_bench_run *run, int status, double started)
{
    struct pd_runlog *log = run->log;
    if (!log)
        return;
    size_t ok = 0, failed = 0, rest = 0;
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_task_state st = run->tasks[k].state;
        ok += st == PD_TASK_SUCCEEDED;
        failed += pd_task_failed(st);
        rest += st == PD_TASK_CANCELLED || st == PD_TASK_PENDING || st == PD_TASK_RUNNING;
    }
    char when[32];
    double end = pd_now();
    local_time(when, sizeof when, end);
    frame(run, PD_LOG_INFO, "%zu/%zu repetitions succeeded, %zu failed, %zu cancelled or not started", ok,
              run->ntasks, failed, rest);
    frame(run, status == 0 ? PD_LOG_INFO : PD_LOG_WARNING, "ended: %s (%.3f s), exit status %d", when,
              end - started, status);
    if (log->fd >= 0)
        close(log->fd);
    free(log);
    run->log = NULL;
}
