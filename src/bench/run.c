/* Orchestration of a bench run: plan everything (config, matrix, every
 * script) before touching the disk, lay out the run directory, hand the
 * pending repetitions to an executor, keep results.csv current as
 * repetitions finish, then write the run summary and the report. */
#include "bench/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/adaptive_plan.h"
#include "bench/cache.h"
#include "common/duration.h"
#include "bench/dryrun_json.h"
#include "bench/iops_meta.h"
#include "bench/bayes_plan.h"
#include "bench/metrics.h"
#include "bench/proc.h"
#include "bench/runctl.h"
#include "bench/runlog.h"
#include "bench/status_rollup.h"
#include "bench/sink_sqlite.h"
#include "bench/summary.h"
#include "common/csv.h"
#include "report/report.h"

bool pd_task_failed(pd_task_state s) { return s == PD_TASK_FAILED || s == PD_TASK_TIMED_OUT; }

/* A helper (post script, parser) that did not end by itself: the
 * repetition is timed out, or cancelled by Ctrl-C. */
static void helper_stopped(pd_bench_task *t, int rc)
{
    t->state = rc == PD_PROC_TIMED_OUT ? PD_TASK_TIMED_OUT : PD_TASK_CANCELLED;
}

int pd_bench_write_status(const pd_bench_task *t, const pd_bench_run *run)
{
    /* IOPS's schema plus paddiser's fields (iops_meta.c); a real metric
     * reads back as the same double */
    json_t *o = pd_iops_status_object(t, run);
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    pd_status_rollup_record(run->rollup, t->exec_id, t->repetition, o); /* as IOPS mirrors every status write */
    json_decref(o);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_status.json", t->dir);
    pd_str s = {0};
    pd_str_printf(&s, "%s\n", text);
    free(text);
    if (!s.data)
        errno = ENOMEM;
    int rc = s.data ? pd_write_file_atomic(path, s.data, s.len) : -1;
    pd_str_free(&s);
    return rc;
}

/* ------------------------------------------------------------ results */

/* key is a whole line of text */
static int line_in(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, key, n) && (p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The header and every succeeded repetition's row in the given layout
 * (run.h); with skip, only the rows whose "exec_NNNN,R" key is not a line
 * of skip (rows already appended). keys (may be NULL) gets the key of each
 * row written, one a line. The flattened rows are iops_meta.c's. */
static void results_rows(const pd_bench_run *run, pd_results_layout layout, const char *skip, pd_str *out,
                         pd_str *keys)
{
    const pd_bench_config *cfg = &run->cfg;
    if (layout == PD_RESULTS_SHORT) {
        pd_str_append(out, "execution_id,repetition");
        for (size_t i = 0; i < cfg->nvars; i++) {
            pd_str_append(out, ",");
            pd_csv_put_field(out, cfg->vars[i].name);
        }
        for (size_t i = 0; i < cfg->nmetrics; i++) {
            pd_str_append(out, ",");
            pd_csv_put_field(out, cfg->metrics[i]);
        }
        pd_str_append(out, "\n");
    } else {
        pd_iops_results_header(run, out);
    }
    for (size_t k = 0; k < run->ntasks; k++) {
        const pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_SUCCEEDED || !t->values)
            continue;
        char key[64];
        snprintf(key, sizeof key, "exec_%04d,%d", t->exec_id, t->repetition);
        if (skip && line_in(skip, key))
            continue;
        if (keys)
            pd_str_printf(keys, "%s\n", key);
        if (layout != PD_RESULTS_SHORT) {
            pd_iops_results_row(run, t, out);
            continue;
        }
        pd_str_append(out, key);
        for (size_t i = 0; i < cfg->nvars; i++) {
            pd_str v = {0};
            pd_val_append(&v, &t->values[i]);
            pd_str_append(out, ",");
            pd_csv_put_field(out, v.data ? v.data : "");
            pd_str_free(&v);
        }
        for (size_t i = 0; i < cfg->nmetrics; i++) {
            pd_str_append(out, ",");
            pd_csv_put_field(out, t->metrics && t->metrics[i] ? t->metrics[i] : "");
        }
        pd_str_append(out, "\n");
    }
}

/* One of the run directory's results files in a layout; 0, or -1 after
 * saying why on stderr. */
static int write_results_file(const pd_bench_run *run, const char *name, pd_results_layout layout)
{
    pd_str s = {0};
    results_rows(run, layout, NULL, &s, NULL);
    char path[PATH_MAX];
    int rc = 0;
    if (!s.data || s.oom)
        errno = ENOMEM;
    if (!s.data || s.oom || pd_path_join(path, sizeof path, run->run_dir, name) != 0 ||
        pd_write_file_atomic(path, s.data, s.len) != 0) {
        fprintf(stderr, "paddiser bench: cannot write %s/%s: %s\n", run->run_dir, name, strerror(errno));
        rc = -1;
    }
    pd_str_free(&s);
    return rc;
}

/* results.csv in the run's layout; beside a short one, the same rows in
 * IOPS's layout in __iops_results.csv, which the run metadata then names
 * for `iops report` (iops_meta.h). 0, or -1 after saying why. */
static int write_results(const pd_bench_run *run)
{
    int rc = write_results_file(run, "results.csv", run->results_layout);
    if (run->results_layout == PD_RESULTS_SHORT &&
        write_results_file(run, PD_IOPS_RESULTS_FILE, PD_RESULTS_IOPS) != 0)
        rc = -1;
    return rc;
}

/* The layout of the run directory's results.csv, from its header
 * (execution.execution_id: IOPS's; execution_id first: short), UNSET when
 * there is none or it is neither. Read only from a regular file, not
 * through a link (a FIFO planted there must not block the resume). */
static pd_results_layout existing_layout(const char *run_dir)
{
    char path[PATH_MAX], head[4096];
    if (pd_path_join(path, sizeof path, run_dir, "results.csv") != 0)
        return PD_RESULTS_UNSET;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    ssize_t n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return PD_RESULTS_UNSET;
    head[n] = '\0';
    head[strcspn(head, "\r\n")] = '\0';
    if (!strncmp(head, "execution_id,", 13))
        return PD_RESULTS_SHORT;
    return strstr(head, "execution.execution_id") ? PD_RESULTS_IOPS : PD_RESULTS_UNSET;
}

/* Creates the directory a file is to go in (a failure shows when the file
 * is written). */
static void mkdir_parent(const char *path)
{
    char *dir = pd_strdup(path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir) {
        *slash = '\0';
        pd_mkdir_p(dir, 0755);
    }
    free(dir);
}

/* Keys ("exec_NNNN,R") of the rows this run appended to output.sink.path,
 * one a line, so a resumed run appends only the rows it has not. */
#define SINK_LEDGER "__paddiser_sink_rows"

/* output.sink.path, when it is not run_dir/results.csv. mode overwrite: the
 * sink is replaced by this run's rows (all of them, after a resume too).
 * mode append (the default): rows not yet appended by this run go to the
 * end when the sink's header is the same (a new or different sink is
 * written whole), and their keys to the run's ledger, so an interrupted and
 * resumed run leaves each repetition's row there once. */
static int write_sink(const pd_bench_run *run, const char *sink)
{
    char own[PATH_MAX + 16], ledger[PATH_MAX + 32];
    snprintf(own, sizeof own, "%s/results.csv", run->run_dir);
    if (!sink || !strcmp(sink, own))
        return 0;
    snprintf(ledger, sizeof ledger, "%s/" SINK_LEDGER, run->run_dir);
    char *old = run->cfg.sink_overwrite ? NULL : pd_read_file(sink, NULL);
    char *done = old ? pd_read_file(ledger, NULL) : NULL;
    pd_str s = {0}, keys = {0};
    int rc = -1;
    results_rows(run, run->results_layout, done, &s, &keys); /* only the rows this run has not appended yet */
    if (!s.data)
        goto out; /* out of memory */
    const char *nl = strchr(s.data, '\n');
    size_t hlen = nl ? (size_t)(nl - s.data) + 1 : s.len;
    int append = old && !strncmp(old, s.data, hlen);
    if (!append && done) { /* written whole: every row */
        pd_str_free(&s);
        pd_str_free(&keys);
        results_rows(run, run->results_layout, NULL, &s, &keys);
        if (!s.data)
            goto out;
    }
    mkdir_parent(sink);
    rc = 0;
    if (append) {
        if (s.len > hlen) {
            /* the user's own path, outside the run directory: a link there is theirs */
            int fd = open(sink, O_WRONLY | O_APPEND | O_CLOEXEC);
            rc = fd >= 0 && write(fd, s.data + hlen, s.len - hlen) == (ssize_t)(s.len - hlen) ? 0 : -1;
            if (fd >= 0 && close(fd) != 0)
                rc = -1;
        }
    } else {
        /* written whole: no earlier row of this run is in it any more */
        rc = pd_write_file_atomic(sink, s.data, s.len);
        if (rc == 0)
            unlink(ledger);
    }
    if (rc != 0) {
        fprintf(stderr, "paddiser bench: cannot write output.sink.path %s: %s\n", sink, strerror(errno));
    } else if (!run->cfg.sink_overwrite && keys.len) {
        int fd = open(ledger, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, keys.data, keys.len) != (ssize_t)keys.len)
            fprintf(stderr, "paddiser bench: warning: cannot write %s: %s\n", ledger, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
out:
    free(old);
    free(done);
    pd_str_free(&s);
    pd_str_free(&keys);
    return rc;
}

/* ----------------------------------------------------------- callbacks */

const char *pd_bench_task_script(const pd_bench_run *run, const pd_bench_task *t)
{
    return run->script_files[t->script_idx];
}

/* Metrics of a succeeded repetition. A parser script past benchmark.timeout,
 * or stopped by Ctrl-C, ends the repetition timed out or cancelled. */
static void parse_task_metrics(pd_bench_run *run, pd_bench_task *t)
{
    const pd_bench_config *cfg = &run->cfg;
    const pd_bench_script *sc = pd_bench_script_at(cfg, t->script_idx);
    if (!sc->has_parser || !t->parser_file)
        return;
    if (!t->metrics)
        t->metrics = calloc(cfg->nmetrics ? cfg->nmetrics : 1, sizeof *t->metrics);
    char **mine = calloc(sc->nmetrics ? sc->nmetrics : 1, sizeof *mine);
    if (!t->metrics || !mine) {
        free(mine);
        return;
    }
    char err[512], log[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/__iops_parser.log", t->dir);
    const char *py = t->script_idx == 0 ? run->python_parser
                     : run->extra_python_parsers ? run->extra_python_parsers[t->script_idx - 1]
                                                 : NULL;
    int found = pd_metrics_parse_file_ctx(t->parser_file, py, log, t->parser_context, cfg->timeout_s,
                                          (const char *const *)sc->metrics, sc->nmetrics, mine, err, sizeof err);
    if (found == PD_PROC_TIMED_OUT || found == PD_PROC_INTERRUPTED) {
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: %s\n", t->exec_id, t->repetition, err);
        helper_stopped(t, found);
    } else if (found < 0)
        fprintf(stderr, "paddiser bench: warning: exec_%04d rep %d: %s\n", t->exec_id, t->repetition, err);
    else if ((size_t)found < sc->nmetrics) {
        pd_str missing = {0};
        for (size_t i = 0; i < sc->nmetrics; i++)
            if (!mine[i])
                pd_str_printf(&missing, " %s", sc->metrics[i]);
        fprintf(stderr, "paddiser bench: warning: exec_%04d rep %d: metrics not found in %s:%s\n", t->exec_id,
                t->repetition, t->parser_file, missing.data ? missing.data : "");
        pd_str_free(&missing);
    }
    /* this script's metrics into their results.csv columns */
    for (size_t i = 0; i < sc->nmetrics; i++) {
        for (size_t k = 0; k < cfg->nmetrics && mine[i]; k++)
            if (!strcmp(cfg->metrics[k], sc->metrics[i])) {
                free(t->metrics[k]);
                t->metrics[k] = mine[i];
                mine[i] = NULL;
            }
        free(mine[i]);
    }
    free(mine);
}

/* post.script: `bash post_<script>.sh` in the repetition directory once the
 * script succeeded, its output written straight to post_stdout/post_stderr;
 * its failure fails the repetition, as in IOPS. It gets benchmark.timeout. */
static void run_post(pd_bench_run *run, pd_bench_task *t)
{
    const pd_bench_script *sc = pd_bench_script_at(&run->cfg, t->script_idx);
    char file[NAME_MAX + 16], out[PATH_MAX + 16], errpath[PATH_MAX + 16];
    snprintf(file, sizeof file, "post_%s.sh", sc->name);
    snprintf(out, sizeof out, "%s/post_stdout", t->dir);
    snprintf(errpath, sizeof errpath, "%s/post_stderr", t->dir);
    char *const argv[] = {"bash", file, NULL};
    pd_proc_opts o = {.cwd = t->dir, .out_path = out, .err_path = errpath, .timeout_s = run->cfg.timeout_s};
    char err[PATH_MAX + 64] = "";
    int rc = pd_proc_exec(argv, &o, err, sizeof err);
    if (rc == 0)
        return;
    if (rc == PD_PROC_TIMED_OUT || rc == PD_PROC_INTERRUPTED) {
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: %s: %s\n", t->exec_id, t->repetition, file, err);
        helper_stopped(t, rc);
        return;
    }
    if (rc < 0)
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: %s failed (%s)\n", t->exec_id, t->repetition, file, err);
    else
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: %s failed (exit %d, see %s)\n", t->exec_id, t->repetition,
                file, rc, errpath);
    t->state = PD_TASK_FAILED;
    t->exit_code = rc < 0 ? 127 : rc;
}

void pd_bench_task_status(pd_bench_run *run, const pd_bench_task *t)
{
    /* --resume trusts this file: say when it could not be kept current */
    if (pd_bench_write_status(t, run) != 0) {
        run->unsaved_status++;
        fprintf(stderr, "paddiser bench: warning: cannot write %s/__iops_status.json: %s\n", t->dir,
                strerror(errno));
    }
}

void pd_bench_task_started(pd_bench_run *run, pd_bench_task *t)
{
    t->state = PD_TASK_RUNNING;
    t->start = pd_now();
    t->end = 0;
    t->exit_code = -1;
    t->error = NULL;
    pd_bench_task_status(run, t);
    pd_runlog_task_started(run, t);
}

/* " (elapsed 1m05s, ETA 3m20s)" for a progress line: the ETA takes the
 * mean time a repetition finished in this invocation so far (with parallel
 * N that is wall time over finished ones, so it already counts overlap). */
static void progress_suffix(const pd_bench_run *run, char *buf, size_t len)
{
    double el = pd_monotonic() - run->progress_t0;
    size_t done = run->done - run->progress_done0, total = run->ntasks - run->progress_done0;
    char e[32], r[32];
    pd_fmt_duration(e, sizeof e, el);
    double eta = pd_eta_s(el, done, total);
    if (eta < 0)
        snprintf(buf, len, " (elapsed %s)", e);
    else {
        pd_fmt_duration(r, sizeof r, eta);
        snprintf(buf, len, " (elapsed %s, ETA %s)", e, r);
    }
}

void pd_bench_task_finished(pd_bench_run *run, pd_bench_task *t)
{
    if (t->end <= 0)
        t->end = pd_now();
    if (t->state == PD_TASK_SUCCEEDED && t->has_post)
        run_post(run, t);
    if (t->state == PD_TASK_SUCCEEDED)
        parse_task_metrics(run, t);
    pd_bench_control_finished(run, t); /* --fail-on-missing-metric, the log's line, --fail-fast, --max-fail */
    pd_bench_task_status(run, t);
    pd_bench_cache_record(run, t);                        /* cache.h */
    pd_bench_budget_add(run, t, t->end - t->start, false); /* budget.h */
    run->done++;
    if (!run->quiet) {
        char when[96] = "";
        if (run->progress)
            progress_suffix(run, when, sizeof when);
        const char *what = t->state == PD_TASK_SUCCEEDED   ? "done"
                           : t->state == PD_TASK_CANCELLED ? "cancelled"
                           : t->state == PD_TASK_TIMED_OUT ? "TIMED OUT"
                                                           : "FAILED";
        if (t->state == PD_TASK_TIMED_OUT && run->cfg.timeout_s > 0)
            fprintf(stderr, "[%zu/%zu] exec_%04d rep %d %s (benchmark.timeout %g s, see %s/stderr)%s\n", run->done,
                    run->ntasks, t->exec_id, t->repetition, what, run->cfg.timeout_s, t->dir, when);
        else if (t->state == PD_TASK_TIMED_OUT) /* SLURM's own time limit */
            fprintf(stderr, "[%zu/%zu] exec_%04d rep %d %s (time limit, see %s/stderr)%s\n", run->done, run->ntasks,
                    t->exec_id, t->repetition, what, t->dir, when);
        else if (t->state == PD_TASK_FAILED && t->error)
            fprintf(stderr, "[%zu/%zu] exec_%04d rep %d %s (%s)%s\n", run->done, run->ntasks, t->exec_id, t->repetition,
                    what, t->error, when);
        else if (t->state == PD_TASK_FAILED && t->exit_code >= 0)
            fprintf(stderr, "[%zu/%zu] exec_%04d rep %d %s (exit %d, see %s/stderr)%s\n", run->done, run->ntasks,
                    t->exec_id, t->repetition, what, t->exit_code, t->dir, when);
        else
            fprintf(stderr, "[%zu/%zu] exec_%04d rep %d %s%s\n", run->done, run->ntasks, t->exec_id, t->repetition, what,
                    when);
    }
    /* Keep results.csv current during long runs without rewriting it for
     * every repetition of a big study; the end of the run writes it anyway. */
    if (t->state == PD_TASK_SUCCEEDED && pd_monotonic() - run->results_written_at >= 1.0) {
        write_results(run);
        run->results_written_at = pd_monotonic();
    }
}

/* ------------------------------------------------------------- layout */

static int run_number(const char *name)
{
    int n = 0, len = 0;
    if (sscanf(name, "run_%d%n", &n, &len) == 1 && name[len] == '\0' && n > 0)
        return n;
    return 0;
}

static int latest_run(const char *workdir)
{
    DIR *d = opendir(workdir);
    if (!d)
        return 0;
    int max = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int n = run_number(e->d_name);
        if (n > max)
            max = n;
    }
    closedir(d);
    return max;
}

static void probe_binary(char *buf, size_t len)
{
    const char *env = getenv("PADDISER_PROBE");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(buf, len, "paddiser-probe");
        return;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if (pd_path_join(buf, len, self, "paddiser-probe") != 0)
        snprintf(buf, len, "paddiser-probe"); /* too long a path: let PATH find it */
}

/* __iops_params.json's text. A bool is JSON true/false, as IOPS writes it;
 * run directories from before wrote "True"/"False" (legacy_bools), which
 * --resume still accepts as the same variables. */
static void params_text(pd_str *out, const pd_bench_run *run, const pd_bench_exec *ex, bool legacy_bools)
{
    pd_str s = {0};
    pd_str_append(&s, "{");
    for (size_t k = 0; k < run->cfg.nvars; k++) { /* in IOPS's order */
        size_t i = pd_bench_var_at(run, k);
        pd_val name = pd_val_str(run->cfg.vars[i].name);
        pd_str_append(&s, k ? ", " : "");
        pd_val_append_json(&s, &name);
        pd_val_free(&name);
        pd_str_append(&s, ": ");
        const pd_val *v = &ex->values[i];
        if (v->kind == PD_VAL_BOOL && legacy_bools) {
            pd_val b = pd_val_str(v->b ? "True" : "False");
            pd_val_append_json(&s, &b);
            pd_val_free(&b);
        } else {
            pd_val_append_json(&s, v);
        }
    }
    pd_str_append(&s, "}\n");
    *out = s;
}

static int write_params(const pd_bench_run *run, const pd_bench_exec *ex, const char *dir, bool verify)
{
    pd_str s = {0};
    params_text(&s, run, ex, false);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_params.json", dir);
    int rc = 0;
    if (verify) {
        char *old = pd_read_file(path, NULL);
        pd_str legacy = {0};
        if (old && s.data && strcmp(old, s.data) != 0)
            params_text(&legacy, run, ex, true);
        if (old && s.data && strcmp(old, s.data) != 0 && !(legacy.data && !strcmp(old, legacy.data))) {
            fprintf(stderr,
                    "paddiser bench: cannot resume: exec_%04d's variables changed since the run started\n"
                    "  was: %s  now: %s",
                    ex->id, old, s.data);
            rc = -1;
        }
        pd_str_free(&legacy);
        if (old) {
            free(old);
            pd_str_free(&s);
            return rc;
        }
    }
    if (!s.data || pd_write_file_atomic(path, s.data, s.len) != 0) {
        fprintf(stderr, "paddiser bench: cannot write %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    pd_str_free(&s);
    return rc;
}

/* A succeeded repetition's metrics as its status file recorded them (the
 * parser ran once, when it succeeded): 1 if the file has them, 0 if not (a
 * run from before they were recorded: parse again). */
static int status_metrics(const pd_bench_run *run, pd_bench_task *t)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_status.json", t->dir);
    json_error_t e;
    json_t *o = json_load_file(path, 0, &e);
    json_t *m = o ? json_object_get(o, "metrics") : NULL;
    int have = json_is_object(m) && run->cfg.nmetrics;
    if (have && !t->metrics)
        t->metrics = calloc(run->cfg.nmetrics, sizeof *t->metrics);
    have = have && t->metrics;
    for (size_t k = 0; have && k < run->cfg.nmetrics; k++) {
        free(t->metrics[k]);
        t->metrics[k] = pd_iops_metric_text(json_object_get(m, run->cfg.metrics[k]));
    }
    json_decref(o);
    return have;
}

static bool status_succeeded(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_status.json", dir);
    json_error_t e;
    json_t *o = json_load_file(path, 0, &e);
    pd_task_state st;
    bool ok = o && pd_iops_status_parse(json_string_value(json_object_get(o, "status")), &st) &&
              st == PD_TASK_SUCCEEDED;
    json_decref(o);
    return ok;
}

/* Before a repetition runs again (--resume), the outputs of the attempt that
 * did not succeed move to previous_attempt_N/, so the run summary does not
 * mix a cut-short trace into the new one, and nothing is lost. */
static void set_aside_previous_attempt(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char dest[PATH_MAX];
    bool made = false;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        bool output = !strcmp(n, "stdout") || !strcmp(n, "stderr") || !strncmp(n, "__iops_trace_", 13) ||
                      !strncmp(n, "__iops_gpu_trace_", 17) || !strncmp(n, "__iops_io_trace_", 16) ||
                      !strncmp(n, "__iops_io_targets_", 18);
        if (!output)
            continue;
        if (!made) {
            for (int k = 1; k < 1000; k++) {
                char name[32];
                snprintf(name, sizeof name, "previous_attempt_%d", k);
                if (pd_path_join(dest, sizeof dest, dir, name) != 0)
                    break;
                if (mkdir(dest, 0755) == 0) {
                    made = true;
                    break;
                }
                if (errno != EEXIST)
                    break;
            }
            if (!made)
                break;
        }
        char from[PATH_MAX], to[PATH_MAX];
        if (pd_path_join(from, sizeof from, dir, n) != 0 || pd_path_join(to, sizeof to, dest, n) != 0 ||
            rename(from, to) != 0)
            fprintf(stderr, "paddiser bench: warning: cannot move %s/%s aside: %s\n", dir, n, strerror(errno));
    }
    closedir(d);
}

/* --resume: what the previous attempt of a repetition that did not succeed
 * may have left running when paddiser was killed (-9): its SLURM job (the
 * job id in __iops_status.json) or its local process group
 * (__paddiser_launch.json). Ended before the repetition runs again. */
static void end_previous_attempt(const pd_bench_run *run, const pd_bench_task *t)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_status.json", t->dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    json_error_t e;
    json_t *o = fd >= 0 ? json_loadfd(fd, 0, &e) : NULL;
    if (fd >= 0)
        close(fd);
    const char *job = json_string_value(json_object_get(o, "job_id"));
    pd_task_state st = PD_TASK_PENDING;
    bool known = pd_iops_status_parse(json_string_value(json_object_get(o, "status")), &st);
    /* Only an attempt the harness did not see end can have left something:
     * "running" (or "pending" when the start could not be written; no
     * status: unknown). A cancelled job was scancelled, but that scancel may
     * have failed: asked about too. Finished states were reaped or ended. */
    bool unfinished = !known || st == PD_TASK_RUNNING || st == PD_TASK_PENDING;
    if (job && *job && (unfinished || st == PD_TASK_CANCELLED))
        pd_bench_end_slurm_attempt(run, t, job);
    json_decref(o);
    if (unfinished)
        pd_bench_end_local_attempt(t);
}

static void print_lines(const char *prefix, const char *text)
{
    if (!text || !*text)
        return;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "%s%.*s\n", prefix, n, p);
        p += n + (nl ? 1 : 0);
    }
}

static void free_script_files(pd_bench_run *run)
{
    for (size_t i = 0; run->script_files && i < pd_bench_nscripts(&run->cfg); i++)
        free(run->script_files[i]);
    free(run->script_files);
    run->script_files = NULL;
}

static void free_run(pd_bench_run *run)
{
    pd_status_rollup_free(run->rollup);
    run->rollup = NULL;
    free_script_files(run);
    for (size_t i = 0; i < run->ntasks; i++) {
        pd_bench_task *t = &run->tasks[i];
        pd_vals_free(t->values, run->cfg.nvars);
        free(t->dir);
        free(t->parser_file);
        free(t->parser_context);
        if (t->metrics)
            for (size_t k = 0; k < run->cfg.nmetrics; k++)
                free(t->metrics[k]);
        free(t->metrics);
    }
    free(run->tasks);
    json_decref(run->adaptive_results);
    free(run->python_parser);
    for (size_t i = 0; run->extra_python_parsers && i < run->cfg.nextra_scripts; i++)
        free(run->extra_python_parsers[i]);
    free(run->extra_python_parsers);
    pd_bench_matrix_free(&run->matrix);
    pd_bench_config_free(&run->cfg);
}

static int copy_config(const pd_bench_run *run)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/__iops_config.yaml", run->run_dir);
    size_t len;
    char *text = pd_read_file(run->cfg.path, &len);
    int rc = text ? pd_write_file_atomic(path, text, len) : -1;
    free(text);
    return rc;
}

/* One harness per run directory at a time (issue #13): an flock held for
 * the whole run or resume on a file created without following links. The
 * kernel drops it with the process (also after kill -9); scripts do not
 * inherit it (O_CLOEXEC). The file names the holder's pid. Returns the
 * descriptor to keep open, or -1 with a message. */
#define RUN_LOCK "__paddiser_lock"
static int lock_run_dir(const char *dir)
{
    char path[PATH_MAX];
    if (pd_path_join(path, sizeof path, dir, RUN_LOCK) != 0) {
        fprintf(stderr, "paddiser bench: %s: path too long\n", dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "paddiser bench: cannot lock the run directory: %s: %s\n", path,
                fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[32] = "";
        ssize_t n = pread(fd, who, sizeof who - 1, 0);
        who[n > 0 ? n : 0] = '\0';
        who[strcspn(who, "\n")] = '\0';
        if (e == EWOULDBLOCK)
            fprintf(stderr,
                    "paddiser bench: %s is in use by another paddiser bench (pid %s); nothing was run twice: "
                    "wait for it to end (or stop it), then --resume\n",
                    dir, who[0] ? who : "unknown");
        else
            fprintf(stderr, "paddiser bench: cannot lock %s: %s\n", path, strerror(e));
        close(fd);
        return -1;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        fprintf(stderr, "paddiser bench: warning: cannot write the holder's pid into %s\n", path);
    return fd;
}

/* What summary_and_report's exit status says. */
enum { SR_SUMMARY_WRITTEN = 1, SR_SUMMARY_FAILED = 2, SR_REPORT_FAILED = 4, SR_MAX = 7 };

/* The run summary and the report (run in a child, see pd_proc_call). */
static int summary_and_report(void *arg)
{
    const char *run_dir = arg;
    char err[512] = "";
    int src = pd_summary_write(run_dir, err, sizeof err), rc = 0;
    if (src < 0)
        fprintf(stderr, "paddiser bench: warning: run summary: %s\n", err);
    rc |= src == 1 ? SR_SUMMARY_WRITTEN : src < 0 ? SR_SUMMARY_FAILED : 0;
    err[0] = '\0';
    if (pd_report_write(run_dir, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser bench: warning: report: %s\n", err);
        rc |= SR_REPORT_FAILED;
    }
    return rc;
}

/* A search that plans each point from the results before it cannot be
 * resumed (--resume refuses it): its name for messages, NULL for the
 * others. */
static const char *unresumable_search(const pd_bench_config *cfg)
{
    return cfg->search == PD_SEARCH_BAYESIAN ? "a bayesian" : cfg->search == PD_SEARCH_ADAPTIVE ? "an adaptive" : NULL;
}

/* A bayesian point's objective from its tasks (tasks[first..ntasks)): the
 * objective_metric's mean over each execution's succeeded repetitions, the
 * best over its executions; NAN when none was measured. */
static double point_objective(const pd_bench_run *run, size_t first)
{
    const pd_bench_config *cfg = &run->cfg;
    size_t mi = 0;
    while (mi < cfg->nmetrics && strcmp(cfg->metrics[mi], cfg->bayes.objective_metric))
        mi++;
    double best = NAN;
    for (size_t k = first; k < run->ntasks && mi < cfg->nmetrics; k++) {
        size_t e = run->tasks[k].exec_idx;
        if (k > first && run->tasks[k - 1].exec_idx == e)
            continue; /* this execution was summed from its first task */
        double sum = 0;
        size_t n = 0;
        for (size_t j = k; j < run->ntasks && run->tasks[j].exec_idx == e; j++) {
            const pd_bench_task *t = &run->tasks[j];
            char *end = NULL;
            const char *txt = t->state == PD_TASK_SUCCEEDED && t->metrics ? t->metrics[mi] : NULL;
            double v = txt ? strtod(txt, &end) : NAN;
            if (txt && end != txt && isfinite(v)) {
                sum += v;
                n++;
            }
        }
        if (!n)
            continue;
        double mean = sum / (double)n;
        if (isnan(best) || (cfg->bayes.maximize ? mean > best : mean < best))
            best = mean;
    }
    return best;
}

/* An adaptive search's tasks and executions grow as its probes step: room
 * for ntasks tasks and nexecs executions, the new entries zeroed. 0, or -1
 * when out of memory. */
static int adaptive_room(pd_bench_run *run, pd_bench_rendered **rendered, char ***commands, size_t *cap_tasks,
                         size_t *cap_execs)
{
    size_t nt = run->matrix.norder, ne = run->matrix.nexecs;
    if (nt > *cap_tasks) {
        size_t n = nt * 2;
        pd_bench_task *t = realloc(run->tasks, n * sizeof *t);
        if (t)
            run->tasks = t;
        pd_bench_rendered *r = t ? realloc(*rendered, n * sizeof *r) : NULL;
        if (!r)
            return -1;
        *rendered = r;
        memset(&run->tasks[*cap_tasks], 0, (n - *cap_tasks) * sizeof *t);
        memset(&r[*cap_tasks], 0, (n - *cap_tasks) * sizeof *r);
        *cap_tasks = n;
    }
    if (ne > *cap_execs) {
        size_t n = ne * 2;
        char **c = realloc(*commands, n * sizeof *c);
        if (!c)
            return -1;
        *commands = c;
        memset(&c[*cap_execs], 0, (n - *cap_execs) * sizeof *c);
        *cap_execs = n;
    }
    return 0;
}

int pd_bench_main(const pd_bench_options *opt)
{
    pd_bench_run run_s = {0}, *run = &run_s;
    size_t cfg_nvars = 0;
    pd_str errors = {0}, warnings = {0};
    int status = 2, lock_fd = -1;
    bool created_dir = false;
    pd_bench_rendered *rendered = NULL; /* per task: script, post script, input files */
    char *sink = NULL;
    char **commands = NULL; /* each execution's first rendered command (__iops_index.json) */
    double started = pd_now();
    /* search_method bayesian: the tasks are planned a point at a time; each
     * pass below renders, prepares and runs from first_task on */
    pd_bench_bayes_plan bayes = {0};
    bool bayesian = false;
    /* search_method adaptive: the probes' repetitions are planned as the
     * previous ones' results are in (adaptive_plan.h), like a bayesian point */
    pd_bench_adapt adapt = {0};
    bool adaptive = false, adapt_failed = false;
    size_t adapt_want = 1, cap_tasks = 0, cap_execs = 0;
    size_t first_task = 0, first_exec = 0, skipped = 0;
    bool meta_lost = false;

    pd_str resolved = {0}; /* --resolve: the study with its machines: entry merged in */
    int lrc = pd_bench_config_load_machine(opt->config_path, opt->machine, &run->cfg, &errors, &warnings,
                                           opt->resolve ? &resolved : NULL);
    print_lines("paddiser bench: warning: ", warnings.data);
    pd_str_clear(&warnings);
    if (lrc != 0) {
        print_lines("", errors.data);
        fprintf(stderr, "paddiser bench: %s: configuration errors; nothing was run\n", opt->config_path);
        goto out;
    }
    if (opt->resolve) {
        fputs(resolved.data ? resolved.data : "", stdout);
        status = 0;
        goto out;
    }
    pd_bench_config *cfg = &run->cfg;
    cfg_nvars = cfg->nvars;
    if (opt->workdir) {
        char cwd[PATH_MAX];
        free(cfg->workdir);
        pd_str w = {0};
        if (opt->workdir[0] == '/')
            pd_str_append(&w, opt->workdir);
        else
            pd_str_printf(&w, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", opt->workdir);
        while (w.len > 1 && w.data[w.len - 1] == '/')
            w.data[--w.len] = '\0';
        cfg->workdir = pd_str_take(&w);
    }
    if (opt->executor >= 0)
        cfg->executor = (pd_executor_kind)opt->executor;
    if (opt->parallel > 0)
        cfg->parallel = opt->parallel;
    if (cfg->executor == PD_EXEC_SLURM && !opt->dry_run) {
        const char *tools[] = {"sbatch", "squeue", "scancel"};
        for (size_t i = 0; i < PD_ARRAY_LEN(tools); i++) {
            char *found = pd_find_in_path(tools[i]);
            if (!found) {
                fprintf(stderr, "paddiser bench: executor slurm needs %s on PATH; nothing was run\n", tools[i]);
                goto out;
            }
            free(found);
        }
    }
    run->quiet = opt->quiet;
    run->progress = opt->progress && !opt->quiet;
    run->ctl = opt->ctl;
    run->executor_name = cfg->executor == PD_EXEC_SLURM ? "slurm" : "local";

    /* Which run directory */
    if (opt->resume) {
        if (opt->resume_dir) {
            snprintf(run->run_dir, sizeof run->run_dir, "%s", opt->resume_dir);
        } else {
            int n = latest_run(cfg->workdir);
            if (!n) {
                fprintf(stderr, "paddiser bench: --resume: no run_NNN directory in %s\n", cfg->workdir);
                goto out;
            }
            snprintf(run->run_dir, sizeof run->run_dir, "%s/run_%03d", cfg->workdir, n);
        }
        char *abs = realpath(run->run_dir, NULL);
        if (!abs) {
            fprintf(stderr, "paddiser bench: --resume: %s: %s\n", run->run_dir, strerror(errno));
            goto out;
        }
        snprintf(run->run_dir, sizeof run->run_dir, "%s", abs);
        free(abs);
    } else {
        if (!opt->dry_run && pd_mkdir_p(cfg->workdir, 0755) != 0) {
            fprintf(stderr, "paddiser bench: cannot create workdir %s: %s\n", cfg->workdir, strerror(errno));
            goto out;
        }
        for (int n = latest_run(cfg->workdir) + 1;; n++) {
            snprintf(run->run_dir, sizeof run->run_dir, "%s/run_%03d", cfg->workdir, n);
            if (opt->dry_run)
                break;
            if (mkdir(run->run_dir, 0755) == 0) {
                created_dir = true;
                break;
            }
            if (errno != EEXIST) {
                fprintf(stderr, "paddiser bench: cannot create %s: %s\n", run->run_dir, strerror(errno));
                goto out;
            }
        }
    }

    if (!opt->dry_run && (lock_fd = lock_run_dir(run->run_dir)) < 0)
        goto out;
    /* results.csv's layout: the option's; a resumed run keeps its file's */
    run->results_layout = opt->results_layout;
    if (run->results_layout == PD_RESULTS_UNSET && opt->resume)
        run->results_layout = existing_layout(run->run_dir);
    if (run->results_layout == PD_RESULTS_UNSET)
        run->results_layout = PD_RESULTS_IOPS;
    if (opt->resume && run->results_layout == PD_RESULTS_IOPS) {
        /* the short layout's companion, stale once results.csv has the rows */
        char stale[PATH_MAX];
        if (pd_path_join(stale, sizeof stale, run->run_dir, PD_IOPS_RESULTS_FILE) == 0)
            unlink(stale);
    }

    /* Plan: matrix, every repetition's script, the sink path */
    if (pd_bench_matrix_build(cfg, run->run_dir, &run->matrix, &errors, &warnings) != 0) {
        print_lines("paddiser bench: warning: ", warnings.data);
        print_lines("", errors.data);
        fprintf(stderr, "paddiser bench: %s: configuration errors; nothing was run\n", opt->config_path);
        goto out;
    }
    if (unresumable_search(cfg) && opt->resume && !opt->dry_run) {
        fprintf(stderr, "paddiser bench: --resume of %s search is not supported; start a new run\n",
                unresumable_search(cfg));
        goto out;
    }
    if (cfg->search == PD_SEARCH_BAYESIAN && !opt->dry_run) { /* the dry run lists every candidate */
        int b = pd_bench_bayes_init(&bayes, cfg, &run->matrix, &warnings);
        bayesian = b == 1;
        if (b < 0 || (bayesian && pd_bench_bayes_next(&bayes, cfg, &run->matrix) < 0)) {
            fprintf(stderr, "paddiser bench: out of memory\n");
            goto out;
        }
    }
    if (cfg->search == PD_SEARCH_ADAPTIVE && !opt->dry_run) { /* the dry run lists each probe's first value */
        adaptive = true;
        if (pd_bench_adapt_init(&adapt, cfg, &run->matrix) != 0) {
            fprintf(stderr, "paddiser bench: out of memory\n");
            goto out;
        }
        /* IOPS caps parallel at the number of probes (max_parallel) */
        adapt_want = (size_t)(cfg->parallel > 0 ? cfg->parallel : 1);
        if (adapt_want > adapt.plan.nprobes)
            adapt_want = adapt.plan.nprobes ? adapt.plan.nprobes : 1;
        long first_added = pd_bench_adapt_next(&adapt, cfg, run->run_dir, &run->matrix, adapt_want, &errors, &warnings);
        run->total_expected = adapt.index_total;
        if (first_added < 0) {
            print_lines("paddiser bench: warning: ", warnings.data);
            print_lines("", errors.data);
            fprintf(stderr, "paddiser bench: %s: cannot plan the adaptive probes; nothing was run\n", opt->config_path);
            goto out;
        }
    }
    print_lines("paddiser bench: warning: ", warnings.data);
    pd_str_clear(&warnings);
    char probe_bin[PATH_MAX];
    probe_binary(probe_bin, sizeof probe_bin);
    run->ntasks = adaptive ? run->matrix.norder : run->matrix.nexecs * (size_t)cfg->repetitions;
    /* room for every task a bayesian search may add (an adaptive one grows) */
    size_t max_execs = bayesian ? bayes.ncands : run->matrix.nexecs;
    size_t max_tasks = adaptive ? run->matrix.norder : max_execs * (size_t)cfg->repetitions;
    cap_tasks = max_tasks ? max_tasks : 1;
    cap_execs = max_execs ? max_execs : 1;
    run->tasks = calloc(max_tasks ? max_tasks : 1, sizeof *run->tasks);
    /* --dry-run keeps nothing of a rendered repetition: it only checks */
    rendered = calloc(max_tasks && !opt->dry_run ? max_tasks : 1, sizeof *rendered);
    commands = opt->dry_run ? NULL : calloc(max_execs ? max_execs : 1, sizeof *commands);
    run->script_files = calloc(pd_bench_nscripts(cfg), sizeof *run->script_files);
    for (size_t i = 0; run->script_files && i < pd_bench_nscripts(cfg); i++) {
        pd_str f = {0};
        pd_str_printf(&f, "run_%s.sh", pd_bench_script_at(cfg, i)->name);
        if (!(run->script_files[i] = pd_str_take(&f))) {
            free_script_files(run);
            break;
        }
    }
    if (!run->tasks || !rendered || !run->script_files || (!opt->dry_run && !commands)) {
        fprintf(stderr, "paddiser bench: out of memory\n");
        goto out;
    }
plan_more:; /* a bayesian search's next point, an adaptive one's next probes come back here */
    int render_errors = 0;
    size_t skipped_before = skipped;
    /* tasks in the order IOPS runs them (pd_bench_matrix.order) */
    for (size_t k = first_task; k < run->matrix.norder; k++) {
            size_t e = run->matrix.order[k].exec;
            int r = run->matrix.order[k].repetition;
            pd_bench_task *t = &run->tasks[k];
            const pd_bench_exec *ex = &run->matrix.execs[e];
            *t = (pd_bench_task){.exec_idx = e, .exec_id = ex->id, .repetition = r, .exit_code = -1,
                                 .script_idx = ex->script};
            t->has_post = pd_bench_script_at(cfg, ex->script)->post.text != NULL;
            if (render_errors)
                continue; /* the same template fails the same way for every repetition */
            pd_bench_rendered rd;
            if (pd_bench_render(cfg, run->run_dir, ex, r, probe_bin, &rd, &errors) != 0) {
                render_errors++;
                continue;
            }
            if (r == 1 && pd_bench_check_command(run, ex, rd.command, opt->dry_run, &errors) != 0) { /* runctl.h */
                pd_bench_rendered_free(&rd, cfg->nvars);
                render_errors++;
                continue;
            }
            if (opt->dry_run) {
                pd_bench_rendered_free(&rd, cfg->nvars);
                continue;
            }
            char dir[PATH_MAX];
            pd_bench_rep_dir(dir, sizeof dir, run->run_dir, ex->id, r);
            if (!(t->dir = pd_strdup(dir))) {
                pd_bench_rendered_free(&rd, cfg->nvars);
                fprintf(stderr, "paddiser bench: out of memory\n");
                goto out;
            }
            t->values = rd.values;
            t->parser_file = rd.parser_file;
            t->parser_context = rd.parser_context;
            rd.values = NULL;
            rd.parser_file = NULL;
            rd.parser_context = NULL;
            if (r == 1 && commands) /* for __iops_index.json, as IOPS records it */
                commands[e] = rd.command;
            else
                free(rd.command);
            rd.command = NULL;
            rendered[k] = rd;
        }
    if (first_task > 0 && render_errors) {
        print_lines("", errors.data);
        fprintf(stderr, "paddiser bench: %s: cannot render the next %s\n", opt->config_path,
                adaptive ? "value of the adaptive probes" : "point of the bayesian search");
        goto out;
    }
    if (first_task > 0) /* what follows up to prepare_more was done in the first pass */
        goto prepare_more;
    sink = pd_bench_sink_path(cfg, run->run_dir, &errors);
    if (render_errors || (cfg->sink_path.text && !sink)) {
        print_lines("", errors.data);
        fprintf(stderr, "paddiser bench: %s: configuration errors; nothing was run\n", opt->config_path);
        goto out;
    }
    /* core-hours budget (budget.h) and execution cache (cache.h) */
    if (pd_bench_budget_setup(run, opt->max_core_hours) != 0 ||
        pd_bench_cache_setup(run, opt->use_cache, opt->cache_only, opt->dry_run) != 0)
        goto out;

    if (opt->dry_run && opt->json) { /* one document on stdout; the cache and budget notes go to stderr */
        pd_bench_cache_preview(run, opt->cache_only, stderr);
        pd_bench_budget_dry_run(run, opt->time_estimates, opt->ntime_estimates, stderr);
        if (pd_bench_dry_run_json(run, stdout) == 0)
            status = 0;
        goto out;
    }
    if (opt->dry_run) {
        printf("%s: %zu executions x %d repetitions = %zu runs (executor %s, parallel %d)\nrun directory: %s\n",
               cfg->name, run->matrix.nexecs, cfg->repetitions, run->ntasks, run->executor_name, cfg->parallel,
               run->run_dir);
        for (size_t e = 0; e < run->matrix.nexecs; e++) {
            pd_str d = {0};
            for (size_t i = 0; i < cfg->nvars; i++) {
                pd_str_printf(&d, " %s=", cfg->vars[i].name);
                pd_val_append(&d, &run->matrix.execs[e].values[i]);
            }
            if (pd_bench_nscripts(cfg) > 1)
                printf("exec_%04d [%s]:%s\n", run->matrix.execs[e].id,
                       pd_bench_script_at(cfg, run->matrix.execs[e].script)->name, d.data ? d.data : "");
            else
                printf("exec_%04d:%s\n", run->matrix.execs[e].id, d.data ? d.data : "");
            pd_str_free(&d);
        }
        pd_bench_cache_preview(run, opt->cache_only, stdout);
        pd_bench_budget_dry_run(run, opt->time_estimates, opt->ntime_estimates, stdout);
        status = 0;
        goto out;
    }

    /* Lay out the run directory. From here on SIGINT/SIGTERM are waited for
     * (proc.h), so that no parser or script is left behind by a harness that
     * died of them. */
    pd_proc_block_signals();
    if (pd_runlog_open(run, opt->config_path, opt->resume, started) != 0) /* --log-file (runlog.h) */
        goto out;
    /* a file past RLIMIT_FSIZE (a full quota) fails its write with EFBIG,
     * said and counted like any other failed write, instead of killing us */
    signal(SIGXFSZ, SIG_IGN);
    if (cfg->nextra_scripts && !(run->extra_python_parsers = calloc(cfg->nextra_scripts, sizeof(char *)))) {
        fprintf(stderr, "paddiser bench: out of memory\n");
        goto out;
    }
    bool any_parser_script = false;
    for (size_t i = 0; i < pd_bench_nscripts(cfg); i++) {
        const pd_bench_script *sc = pd_bench_script_at(cfg, i);
        if (!sc->parser_script)
            continue;
        any_parser_script = true;
        pd_str p = {0};
        if (i == 0)
            pd_str_printf(&p, "%s/__iops_parser.py", run->run_dir);
        else
            pd_str_printf(&p, "%s/__iops_parser_%s.py", run->run_dir, sc->name);
        char *file = pd_str_take(&p);
        if (i == 0)
            run->python_parser = file;
        else
            run->extra_python_parsers[i - 1] = file;
        if (!file || pd_write_file_atomic(file, sc->parser_script, strlen(sc->parser_script))) {
            fprintf(stderr, "paddiser bench: cannot write the parser script into %s\n", run->run_dir);
            goto out;
        }
    }
    if (any_parser_script) {
        char *py = pd_find_in_path("python3");
        if (!py)
            fprintf(stderr, "paddiser bench: warning: python3 not found; parser_script ignored, metrics are read "
                            "natively (JSON or key=value)\n");
        free(py);
    }
    char cfgcopy[PATH_MAX + 32];
    bool have_copy = pd_path_join(cfgcopy, sizeof cfgcopy, run->run_dir, "__iops_config.yaml") == 0 &&
                     access(cfgcopy, F_OK) == 0;
    if ((!opt->resume || !have_copy) && copy_config(run) != 0)
        fprintf(stderr, "paddiser bench: warning: cannot copy the config into %s\n", run->run_dir);
    if (!run->rollup)
        run->rollup = pd_status_rollup_open(run->run_dir, cfg->name, cfg->repetitions);
prepare_more:
    for (size_t e = first_exec; e < run->matrix.nexecs; e++) {
        char dir[PATH_MAX];
        pd_bench_exec_dir(dir, sizeof dir, run->run_dir, run->matrix.execs[e].id);
        if (pd_mkdir_p(dir, 0755) != 0 || write_params(run, &run->matrix.execs[e], dir, opt->resume) != 0) {
            if (errno)
                fprintf(stderr, "paddiser bench: cannot prepare %s: %s\n", dir, strerror(errno));
            goto out;
        }
    }
    for (size_t k = first_task; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (pd_proc_poll_interrupt()) {
            if (unresumable_search(cfg))
                fprintf(stderr, "paddiser bench: interrupted while preparing %s; %s search cannot be "
                                "resumed: start a new run\n", run->run_dir, unresumable_search(cfg));
            else
                fprintf(stderr, "paddiser bench: interrupted while preparing %s, before any repetition started; "
                                "resume with: paddiser bench %s --resume %s\n",
                        run->run_dir, opt->config_path, run->run_dir);
            status = pd_proc_interrupt_status();
            goto out;
        }
        if (opt->resume && status_succeeded(t->dir)) {
            t->state = PD_TASK_SUCCEEDED;
            if (!status_metrics(run, t)) { /* a status file without them: parse once more */
                parse_task_metrics(run, t);
                if (t->state != PD_TASK_SUCCEEDED) /* its parser timed out this time */
                    pd_bench_task_status(run, t);
            }
            skipped++;
            continue;
        }
        if (pd_bench_cache_take(run, t, opt->cache_only, false)) { /* from the cache, or --cache-only */
            skipped++;
            continue;
        }
        if (opt->resume) {
            end_previous_attempt(run, t);
            set_aside_previous_attempt(t->dir);
        }
        char path[PATH_MAX + NAME_MAX + 2];
        const pd_bench_rendered *rd = &rendered[k];
        if (pd_path_join(path, sizeof path, t->dir, pd_bench_task_script(run, t)) != 0 ||
            pd_mkdir_p(t->dir, 0755) != 0 || pd_write_file_atomic(path, rd->script, strlen(rd->script)) != 0 ||
            chmod(path, 0755) != 0 || pd_bench_write_status(t, run) != 0) {
            fprintf(stderr, "paddiser bench: cannot prepare %s: %s\n", t->dir, strerror(errno));
            goto out;
        }
        if (rd->post) {
            snprintf(path, sizeof path, "%s/post_%s.sh", t->dir, pd_bench_script_at(cfg, t->script_idx)->name);
            if (pd_write_file_atomic(path, rd->post, strlen(rd->post)) != 0 || chmod(path, 0755) != 0) {
                fprintf(stderr, "paddiser bench: cannot write %s: %s\n", path, strerror(errno));
                goto out;
            }
        }
        for (size_t i = 0; i < rd->ninputs; i++) { /* scripts[].inputs, rewritten for every repetition */
            mkdir_parent(rd->input_paths[i]);
            if (pd_write_file_atomic(rd->input_paths[i], rd->input_texts[i], strlen(rd->input_texts[i])) != 0 ||
                (rd->input_modes[i] >= 0 && chmod(rd->input_paths[i], (mode_t)rd->input_modes[i]) != 0)) {
                fprintf(stderr, "paddiser bench: cannot write input %s: %s\n", rd->input_paths[i], strerror(errno));
                goto out;
            }
        }
    }
    /* what IOPS's `find` reads (iops_meta.h); the run metadata again at the
     * end. Not written: said, and the run exits 1 (as for results.csv) */
    if (pd_iops_write_index(run, commands) != 0 || pd_iops_write_run_metadata(run, started, 0) != 0) {
        fprintf(stderr, "paddiser bench: cannot write the IOPS run metadata (" PD_IOPS_INDEX_FILE ", "
                        PD_IOPS_RUN_METADATA_FILE ") into %s: %s\n", run->run_dir, strerror(errno));
        meta_lost = true;
    }
    run->done += skipped - skipped_before;
    if (!opt->quiet && first_task == 0) {
        if (opt->resume)
            fprintf(stderr, "paddiser bench: resuming %s: %zu of %zu repetitions already succeeded\n", run->run_dir,
                    skipped, run->ntasks);
        else if (adaptive)
            fprintf(stderr, "paddiser bench: %s: adaptive search of '%s': %zu probes x %d repetitions (%s, parallel %d) "
                            "in %s\n",
                    cfg->name, cfg->vars[adapt.var].name, adapt.plan.nprobes, cfg->repetitions, run->executor_name,
                    cfg->parallel, run->run_dir);
        else
            fprintf(stderr, "paddiser bench: %s: %zu executions x %d repetitions (%s, parallel %d) in %s\n", cfg->name,
                    run->matrix.nexecs, cfg->repetitions, run->executor_name, cfg->parallel, run->run_dir);
    }
    write_results(run);

    if (first_task == 0) { /* the ETA's clock: skipped and cached repetitions took no time */
        run->progress_t0 = pd_monotonic();
        run->progress_done0 = run->done;
    }
    /* Execute */
    int xrc = cfg->executor == PD_EXEC_SLURM ? pd_exec_slurm(run, cfg->parallel, cfg->poll_interval_s)
                                             : pd_exec_local(run, cfg->parallel);
    pd_bench_control_report(run, opt->config_path); /* stopped by --fail-fast/--max-fail */
    if (bayesian && xrc == 0 && !run->stop_starting && !run->budget.stopped) { /* results, then the next point */
        pd_bench_bayes_tell(&bayes, point_objective(run, first_task));
        size_t norder = run->matrix.norder, nexecs = run->matrix.nexecs;
        long added = pd_bench_bayes_next(&bayes, cfg, &run->matrix);
        if (added < 0) {
            fprintf(stderr, "paddiser bench: out of memory\n");
            goto out;
        }
        if (added > 0) {
            first_task = norder;
            first_exec = nexecs;
            run->ntasks = run->matrix.norder;
            goto plan_more;
        }
    }
    if (adaptive && xrc == 0 && !run->stop_starting && !run->budget.stopped) { /* results, then the next probes */
        size_t norder = run->matrix.norder, nexecs = run->matrix.nexecs;
        long added = -1;
        if (pd_bench_adapt_tell(&adapt, cfg, run->tasks, first_task, run->ntasks, &errors) == 0)
            added = pd_bench_adapt_next(&adapt, cfg, run->run_dir, &run->matrix, adapt_want, &errors, &warnings);
        print_lines("paddiser bench: warning: ", warnings.data);
        pd_str_clear(&warnings);
        if (added < 0) { /* IOPS's run ends on the exception: so does this one, with what it has */
            print_lines("paddiser bench: ", errors.data);
            pd_str_clear(&errors);
            adapt_failed = true;
        } else if (added > 0) {
            if (adaptive_room(run, &rendered, &commands, &cap_tasks, &cap_execs) != 0) {
                fprintf(stderr, "paddiser bench: out of memory\n");
                goto out;
            }
            first_task = norder;
            first_exec = nexecs;
            run->ntasks = run->matrix.norder;
            run->total_expected = adapt.index_total;
            goto plan_more;
        }
    }
    if (adaptive && xrc == 0) { /* what IOPS logs and keeps in its run metadata */
        run->adaptive_results = pd_bench_adapt_results(&adapt, cfg);
        if (!opt->quiet)
            pd_bench_adapt_print(&adapt, cfg, stderr);
    }
    /* results not saved: the run did not succeed, whatever the scripts did */
    int lost = write_results(run) != 0;
    lost |= (cfg->sink_type == PD_SINK_SQLITE ? pd_bench_sink_sqlite(run, sink) : write_sink(run, sink)) != 0;
    lost |= run->unsaved_status > 0;
    /* the roll-up, complete: with the repetitions an earlier invocation ran */
    for (size_t k = 0; k < run->ntasks && run->rollup; k++) {
        char path[PATH_MAX + 32];
        if (!run->tasks[k].dir)
            continue;
        snprintf(path, sizeof path, "%s/__iops_status.json", run->tasks[k].dir);
        pd_status_rollup_add_file(run->rollup, run->tasks[k].exec_id, run->tasks[k].repetition, path);
    }
    if (run->rollup && pd_status_rollup_close(run->rollup) != 0) /* best effort, as in IOPS */
        fprintf(stderr, "paddiser bench: warning: cannot write %s/" PD_STATUS_ROLLUP_FILE ": %s\n", run->run_dir,
                strerror(errno));
    if (pd_iops_write_run_metadata(run, started, pd_now()) != 0) {
        fprintf(stderr, "paddiser bench: cannot write %s/" PD_IOPS_RUN_METADATA_FILE ": %s\n", run->run_dir,
                strerror(errno));
        meta_lost = true;
    }
    lost |= meta_lost;
    size_t ok = 0, failed = 0, timed_out = 0, cancelled = 0;
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_task_state st = run->tasks[k].state;
        ok += st == PD_TASK_SUCCEEDED;
        failed += pd_task_failed(st);
        timed_out += st == PD_TASK_TIMED_OUT;
        cancelled += (st == PD_TASK_CANCELLED || st == PD_TASK_PENDING) && !run->tasks[k].not_in_cache;
    }
    if (xrc != 0 && unresumable_search(cfg)) {
        fprintf(stderr,
                "paddiser bench: interrupted: %zu succeeded, %zu failed, %zu cancelled or not started\n"
                "paddiser bench: %s search cannot be resumed: start a new run\n",
                ok, failed, cancelled, unresumable_search(cfg));
        status = xrc;
        goto out;
    }
    if (xrc != 0) {
        fprintf(stderr,
                "paddiser bench: interrupted: %zu succeeded, %zu failed, %zu cancelled or not started\n"
                "paddiser bench: resume with: paddiser bench %s --resume %s\n",
                ok, failed, cancelled, opt->config_path, run->run_dir);
        status = xrc;
        goto out;
    }
    char summary[PATH_MAX + 40], report[PATH_MAX + 16];
    /* display only; the run directory was made, so its files' names fit */
    pd_path_join(summary, sizeof summary, run->run_dir, "__iops_resource_summary.csv");
    pd_path_join(report, sizeof report, run->run_dir, "report.html");
    /* in a child the harness waits for like any other: Ctrl-C stops it */
    char err[512] = "";
    int crc = pd_proc_call(summary_and_report, run->run_dir, err, sizeof err);
    if (crc < 0 || crc > SR_MAX) {
        fprintf(stderr, "paddiser bench: %s while writing the run summary and report; write them with: paddiser "
                        "bench --summarize %s; paddiser report %s\n",
                crc == PD_PROC_INTERRUPTED ? "interrupted" : crc < 0 ? err : "crashed", run->run_dir, run->run_dir);
        if (lost)
            fprintf(stderr, "paddiser bench: the results were not all saved (see above)\n");
        status = crc == PD_PROC_INTERRUPTED ? pd_proc_interrupt_status() : 1;
        goto out;
    }
    int src = crc & SR_SUMMARY_WRITTEN ? 1 : crc & SR_SUMMARY_FAILED ? -1 : 0, rrc = crc & SR_REPORT_FAILED;
    printf("%s: %zu/%zu repetitions succeeded", cfg->name, ok, run->ntasks);
    if (failed)
        printf(", %zu failed", failed);
    if (timed_out)
        printf(" (%zu timed out)", timed_out);
    printf("\nrun directory: %s\nresults: %s/results.csv\n", run->run_dir, run->run_dir);
    char own[PATH_MAX + 16];
    if (cfg->sink_type == PD_SINK_SQLITE)
        printf("output.sink: %s%s (sqlite, table %s)\n", sink ? sink : run->run_dir, sink ? "" : "/results.db",
               cfg->sink_table ? cfg->sink_table : "results");
    else if (sink && (pd_path_join(own, sizeof own, run->run_dir, "results.csv") != 0 || strcmp(sink, own)))
        printf("output.sink: %s\n", sink);
    pd_bench_cache_report(run, stdout);
    pd_bench_budget_report(run, stdout);
    printf("summary: %s\n", src == 1 ? summary : src == 0 ? "(no resource samples, none written)" : "(not written)");
    printf("report: %s\n", rrc == 0 ? report : "(not written)");
    fflush(stdout);
    status = failed || cancelled || adapt_failed ? 1 : 0;
    if (lost) {
        fprintf(stderr, "paddiser bench: the results were not all saved (see above%s): exit 1\n",
                run->unsaved_status ? "; a repetition whose status file was not written runs again on --resume" : "");
        status = 1;
    }

out:
    pd_runlog_close(run, status, started);
    pd_bench_control_free(run);
    if (status == 2 && created_dir) { /* empty: nothing was run */
        char lock[PATH_MAX];
        if (pd_path_join(lock, sizeof lock, run->run_dir, RUN_LOCK) == 0)
            unlink(lock);
        rmdir(run->run_dir);
    }
    if (lock_fd >= 0)
        close(lock_fd);
    if (rendered && !opt->dry_run)
        for (size_t k = 0; k < run->ntasks; k++)
            pd_bench_rendered_free(&rendered[k], cfg_nvars);
    free(rendered);
    for (size_t e = 0; commands && e < run->matrix.nexecs; e++)
        free(commands[e]);
    free(commands);
    free(sink);
    pd_str_free(&resolved);
    pd_bench_cache_close(run->cache);
    pd_bench_bayes_free(&bayes, cfg_nvars);
    pd_bench_adapt_free(&adapt, cfg_nvars);
    free_run(run);
    pd_str_free(&errors);
    pd_str_free(&warnings);
    return status;
}
