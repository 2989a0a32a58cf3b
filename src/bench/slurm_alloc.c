/* SLURM single-allocation mode (slurm_options.allocation.mode: single, as in
 * IOPS 3.5.8): every pending repetition is listed up front in
 * run_dir/__iops_kickoff.sh, submitted once. Inside the allocation that
 * script runs the repetitions one after another, each `timeout`-bounded by
 * allocation.test_timeout, in its directory with stdout/stderr there, so a
 * script's own srun lines launch onto the allocation. The script leaves a
 * one-line state file per repetition (RUNNING, then EXIT or TIMEOUT with the
 * exit code and times); the harness polls those, one repetition at a time
 * in order, and finishes each as the per-test executor does (post script,
 * parser, __iops_status.json, results.csv). The allocation itself is polled
 * every poll_interval: when it ends, the repetitions it did not finish fail.
 * Ctrl-C cancels the allocation; --fail-fast, --max-fail and the core-hours
 * budget leave a stop file the script checks before each repetition. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/budget.h"
#include "bench/proc.h"
#include "bench/slurm.h"
#include "bench/status_rollup.h"

#define KICKOFF_FILE "__iops_kickoff.sh"     /* IOPS's name for it */
#define STATE_FILE "__paddiser_alloc_state"  /* per repetition, written by the kickoff script */
#define STOP_FILE "__paddiser_alloc_stop"    /* in the run directory: start nothing more */
#define DEFAULT_TEST_TIMEOUT_S 3600.0        /* IOPS's allocation.test_timeout default */

/* s single-quoted for bash */
static void quoted(pd_str *out, const char *s)
{
    pd_str_printf(out, "'");
    for (const char *p = s; *p; p++)
        pd_str_printf(out, *p == '\'' ? "'\\''" : "%c", *p);
    pd_str_printf(out, "'");
}

static double test_timeout(const pd_bench_run *run)
{
    if (run->cfg.slurm.test_timeout_s > 0)
        return run->cfg.slurm.test_timeout_s;
    return run->cfg.timeout_s > 0 ? run->cfg.timeout_s : DEFAULT_TEST_TIMEOUT_S;
}

/* The kickoff script as IOPS lays it out: shebang, the allocation_script's
 * #SBATCH lines (SLURM reads them only before the first command), its own
 * (job name, logs/single_alloc_%j.out/.err), the allocation_script's other
 * lines (modules, exports), the dispatcher, one run_test per repetition. */
static char *kickoff_text(const pd_bench_run *run, size_t *todo, size_t ntodo)
{
    pd_str s = {0}, setup = {0};
    pd_str_printf(&s, "#!/bin/bash\n");
    char *user = pd_strdup(run->cfg.slurm.allocation_script ? run->cfg.slurm.allocation_script : "");
    bool first = true;
    for (char *line = user, *next; line && *line; line = next, first = false) {
        char *nl = strchr(line, '\n');
        next = nl ? nl + 1 : line + strlen(line);
        if (nl)
            *nl = '\0';
        if (first && !strncmp(line, "#!", 2))
            continue; /* the user's shebang: ours stands */
        const char *t = line + strspn(line, " \t");
        if (!strncmp(t, "#SBATCH", 7))
            pd_str_printf(&s, "%s\n", t);
        else if (setup.len || *t)
            pd_str_printf(&setup, "%s\n", line);
    }
    free(user);
    /* sbatch reads "..." in #SBATCH lines, not '...' */
    const char *q = strpbrk(run->run_dir, " \t") ? "\"" : "";
    pd_str_printf(&s,
                  "#SBATCH --job-name=iops_single_alloc\n"
                  "#SBATCH --output=%s%s/logs/single_alloc_%%j.out%s\n"
                  "#SBATCH --error=%s%s/logs/single_alloc_%%j.err%s\n",
                  q, run->run_dir, q, q, run->run_dir, q);
    double limit = test_timeout(run);
    pd_str_printf(&s,
                  "\n"
                  "# paddiser single-allocation script (slurm_options.allocation.mode: single):\n"
                  "# runs the %zu repetitions below in turn inside this allocation,\n"
                  "# each bounded by %g s (allocation.test_timeout)\n\n",
                  ntodo, limit);
    if (setup.len)
        pd_str_printf(&s, "%s\n", setup.data);
    pd_str_free(&setup);
    pd_str_printf(&s, "_pd_limit=%.3f\n_pd_limit_ns=%.0f\n_pd_stop=", limit, ceil(limit * 1e9));
    quoted(&s, run->run_dir);
    pd_str_printf(&s, "/" STOP_FILE "\n");
    /* the state file is replaced by a rename, so the harness never reads half a line */
    pd_str_printf(&s, "%s",
                  "_pd_state() { printf '%s\\n' \"$2\" >\"$1/" STATE_FILE ".tmp\" && "
                  "mv -f \"$1/" STATE_FILE ".tmp\" \"$1/" STATE_FILE "\"; }\n"
                  "run_test() {\n"
                  "    [ -e \"$_pd_stop\" ] && exit 0\n"
                  "    cd \"$1\" || return 0\n"
                  "    local t0 t1 rc\n"
                  "    t0=$(date +%s%N)\n"
                  "    _pd_state \"$1\" \"RUNNING $t0\"\n"
                  "    timeout -k 3 \"$_pd_limit\" bash \"$2\" >stdout 2>stderr </dev/null\n"
                  "    rc=$?\n"
                  "    t1=$(date +%s%N)\n"
                  "    if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ $((t1 - t0)) -ge $_pd_limit_ns ]; then\n"
                  "        _pd_state \"$1\" \"TIMEOUT $rc $t0 $t1\"\n"
                  "    else\n"
                  "        _pd_state \"$1\" \"EXIT $rc $t0 $t1\"\n"
                  "    fi\n"
                  "}\n\n");
    for (size_t i = 0; i < ntodo; i++) {
        const pd_bench_task *t = &run->tasks[todo[i]];
        pd_str_printf(&s, "run_test ");
        quoted(&s, t->dir);
        pd_str_printf(&s, " ");
        quoted(&s, pd_bench_task_script(run, t));
        pd_str_printf(&s, " # exec_%04d rep %d\n", t->exec_id, t->repetition);
    }
    return pd_str_take(&s);
}

/* What the kickoff script says of a repetition: 0 nothing yet, 1 running,
 * 2 finished (state, exit code, start and end set). */
static int read_state(const pd_bench_task *t, pd_task_state *state, int *code, double *start, double *end)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" STATE_FILE, t->dir);
    char *text = pd_read_file(path, NULL);
    if (!text)
        return 0;
    char word[16] = "";
    long long t0 = 0, t1 = 0;
    int rc = 0, n = sscanf(text, "%15s", word), got = 0;
    if (n == 1 && !strcmp(word, "RUNNING") && sscanf(text, "%*s %lld", &t0) == 1) {
        *start = (double)t0 * 1e-9;
        got = 1;
    } else if (n == 1 && (!strcmp(word, "EXIT") || !strcmp(word, "TIMEOUT")) &&
               sscanf(text, "%*s %d %lld %lld", &rc, &t0, &t1) == 3) {
        *start = (double)t0 * 1e-9;
        *end = (double)t1 * 1e-9;
        *code = rc;
        *state = word[0] == 'T' ? PD_TASK_TIMED_OUT : rc == 0 ? PD_TASK_SUCCEEDED : PD_TASK_FAILED;
        got = 2;
    }
    free(text);
    return got;
}

typedef struct {
    pd_bench_run *run;
    size_t *todo, ntodo;
    size_t cur;        /* todo[cur] is the repetition the allocation runs now, or next */
    char job[64];      /* the allocation's job id */
    bool stop_written; /* --fail-fast/--max-fail/budget: the stop file is there */
} alloc;

/* Takes what the state files say, in order: the current repetition started
 * or finished; a finished one lets the next be looked at. */
static void collect(alloc *a)
{
    while (a->cur < a->ntodo && !pd_proc_interrupted()) {
        pd_bench_task *t = &a->run->tasks[a->todo[a->cur]];
        pd_task_state st = PD_TASK_PENDING;
        int code = -1;
        double start = 0, end = 0;
        int got = read_state(t, &st, &code, &start, &end);
        if (got == 0)
            return;
        if (t->state == PD_TASK_PENDING) {
            pd_bench_task_started(a->run, t);
            if (!a->run->quiet)
                fprintf(stderr, "paddiser bench: exec_%04d rep %d running in allocation %s\n", t->exec_id,
                        t->repetition, a->job);
        }
        t->start = start; /* the script's clock, not this poll's */
        if (got == 1)
            return;
        t->state = st;
        t->exit_code = code;
        t->end = end;
        pd_bench_task_finished(a->run, t);
        a->cur++;
    }
}

/* The allocation ended: each repetition it did not finish, looked at on its
 * own (one whose directory vanished left no state file, and the script went
 * on), failed; the one it was running timed out when the allocation hit its
 * time limit, or was cancelled with it. After a stop file, the ones it never
 * started were not started. */
static void allocation_ended(alloc *a, const char *raw)
{
    collect(a);
    for (; a->cur < a->ntodo && !pd_proc_interrupted(); a->cur++) {
        pd_bench_task *t = &a->run->tasks[a->todo[a->cur]];
        pd_task_state st = PD_TASK_PENDING;
        int code = -1;
        double start = 0, end = 0;
        int got = read_state(t, &st, &code, &start, &end);
        if (got == 0 && a->stop_written)
            continue;
        if (t->state == PD_TASK_PENDING)
            pd_bench_task_started(a->run, t);
        if (got > 0)
            t->start = start;
        if (got == 2) {
            t->state = st;
            t->exit_code = code;
            t->end = end;
        } else {
            t->state = got == 0                          ? PD_TASK_FAILED
                       : !strcmp(raw, "TIMEOUT")         ? PD_TASK_TIMED_OUT
                       : !strncmp(raw, "CANCELLED", 9)   ? PD_TASK_CANCELLED
                                                         : PD_TASK_FAILED;
            t->error = got ? "the SLURM allocation ended while it ran" : "the SLURM allocation ended before it ran";
        }
        pd_bench_task_finished(a->run, t);
    }
}

/* Is the allocation over? Asked every poll_interval: queued or running
 * means no; gone from the queue, its final state says (sacct, info
 * command); unknown to everything ten times in a row, it is lost. */
static bool allocation_over(alloc *a, int *unknown, char *raw, size_t rawlen)
{
    char err[256], state[64];
    int q = pd_slurm_queue_state(a->run, a->job, state, sizeof state, err, sizeof err);
    if (q == 1 && pd_slurm_state(state) == PD_TASK_PENDING) {
        *unknown = 0;
        return false;
    }
    pd_task_state fs = PD_TASK_PENDING;
    int code;
    if (pd_slurm_final_state(a->run, a->job, &fs, &code, raw, rawlen) == 0) {
        *unknown = 0;
        return fs != PD_TASK_PENDING;
    }
    if (q < 0 || ++*unknown < 10) /* the status command failed: a controller hiccup says nothing */
        return false;
    fprintf(stderr, "paddiser bench: allocation %s vanished without a final state\n", a->job);
    snprintf(raw, rawlen, "UNKNOWN");
    return true;
}

static void write_stop(alloc *a)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" STOP_FILE, a->run->run_dir);
    if (pd_write_file_atomic(path, "stop\n", 5) != 0)
        fprintf(stderr, "paddiser bench: warning: cannot write %s: %s; the allocation runs on\n", path,
                strerror(errno));
    a->stop_written = true;
}

/* Writes and submits the kickoff script: 0 with a->job set, -1 (said why). */
static int submit(alloc *a)
{
    pd_bench_run *run = a->run;
    char path[PATH_MAX + 32], logs[PATH_MAX + 8], stop[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/" KICKOFF_FILE, run->run_dir);
    snprintf(logs, sizeof logs, "%s/logs", run->run_dir);
    snprintf(stop, sizeof stop, "%s/" STOP_FILE, run->run_dir);
    unlink(stop); /* an earlier invocation's */
    for (size_t i = 0; i < a->ntodo; i++) {
        char st[PATH_MAX + 32];
        snprintf(st, sizeof st, "%s/" STATE_FILE, run->tasks[a->todo[i]].dir);
        unlink(st);
    }
    char *text = kickoff_text(run, a->todo, a->ntodo);
    if (!text || pd_mkdir_p(logs, 0755) != 0 || pd_write_file_atomic(path, text, strlen(text)) != 0 ||
        chmod(path, 0755) != 0) {
        fprintf(stderr, "paddiser bench: cannot write %s: %s\n", path, text ? strerror(errno) : "out of memory");
        free(text);
        return -1;
    }
    free(text);
    char err[256], what[sizeof path + 32];
    char *args[] = {pd_strdup("--parsable"), pd_strdup(path)};
    char **argv = pd_slurm_submit_command(run, args, 2, err, sizeof err);
    if (!argv) {
        fprintf(stderr, "paddiser bench: cannot submit the single allocation (%s): %s\n", path, err);
        return -1;
    }
    snprintf(what, sizeof what, "the single allocation (%s)", path);
    return pd_slurm_submit(run, argv, run->run_dir, what, a->job, sizeof a->job);
}

int pd_exec_slurm_single(pd_bench_run *run, double poll_interval_s)
{
    pd_proc_block_signals();
    alloc a = {.run = run};
    a.todo = calloc(run->ntasks ? run->ntasks : 1, sizeof *a.todo);
    if (!a.todo) {
        fprintf(stderr, "paddiser bench: out of memory\n");
        return 0;
    }
    for (size_t k = 0; k < run->ntasks; k++)
        if (run->tasks[k].state == PD_TASK_PENDING)
            a.todo[a.ntodo++] = k;
    if (a.ntodo == 0 || run->stop_starting || pd_bench_budget_exhausted(run)) {
        free(a.todo);
        return 0;
    }
    if (run->cfg.parallel > 1) /* IOPS: "parallel ignored in single-allocation mode" */
        fprintf(stderr, "paddiser bench: warning: parallel %d ignored in single-allocation mode (the repetitions "
                        "run one after another inside the allocation)\n", run->cfg.parallel);
    if (submit(&a) != 0) { /* every repetition failed to start */
        for (size_t i = 0; i < a.ntodo && !pd_proc_interrupted(); i++) {
            pd_bench_task *t = &run->tasks[a.todo[i]];
            pd_bench_task_started(run, t);
            t->state = PD_TASK_FAILED;
            t->error = "the single allocation could not be submitted";
            pd_bench_task_finished(run, t);
        }
        free(a.todo);
        return pd_proc_interrupted() ? pd_proc_interrupt_status() : 0;
    }
    /* the job id in every pending repetition's status: --resume after a
     * kill -9 cancels the allocation through it */
    for (size_t i = 0; i < a.ntodo; i++) {
        pd_bench_task *t = &run->tasks[a.todo[i]];
        snprintf(t->job_id, sizeof t->job_id, "%s", a.job);
        pd_bench_task_status(run, t);
    }
    if (!run->quiet)
        fprintf(stderr, "paddiser bench: %zu repetitions submitted as single allocation %s (%s/" KICKOFF_FILE ")\n",
                a.ntodo, a.job, run->run_dir);
    /* the state files are read twice a second (as IOPS polls its status
     * files), the allocation's state every poll_interval */
    double file_poll = poll_interval_s < 0.5 ? poll_interval_s : 0.5;
    double next_check = 0;
    int unknown = 0, rc = 0;
    char raw[64] = "";
    for (;;) {
        if (pd_proc_poll_interrupt() || pd_proc_interrupted()) {
            pd_slurm_cancel(run, a.job, true);
            for (size_t i = a.cur; i < a.ntodo; i++) {
                pd_bench_task *t = &run->tasks[a.todo[i]];
                if (t->state == PD_TASK_RUNNING) {
                    t->state = PD_TASK_CANCELLED;
                    pd_bench_task_finished(run, t);
                }
            }
            rc = pd_proc_interrupt_status();
            break;
        }
        collect(&a);
        if (a.cur >= a.ntodo)
            break;
        if (!a.stop_written && (run->stop_starting || pd_bench_budget_exhausted(run)))
            write_stop(&a);
        if (pd_monotonic() >= next_check) {
            next_check = pd_monotonic() + poll_interval_s;
            if (allocation_over(&a, &unknown, raw, sizeof raw)) {
                allocation_ended(&a, raw);
                break;
            }
        }
        pd_status_rollup_flush_due(run->rollup);
        double until = pd_monotonic() + file_poll;
        while (!pd_proc_interrupted() && pd_monotonic() < until)
            pd_proc_wait_signal(until - pd_monotonic());
    }
    free(a.todo);
    return rc;
}
