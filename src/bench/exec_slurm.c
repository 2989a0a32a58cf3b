/* SLURM executor: one sbatch job per repetition (--parsable, stdout/stderr
 * into the repetition directory), at most `parallel` in flight, polled with
 * squeue; the final state comes from sacct, or from scontrol when the
 * cluster keeps no accounting. Ctrl-C scancels every job in flight. Every
 * SLURM command is bounded by slurm_options.command_timeout, and
 * slurm_options.commands replaces submit/status/info/cancel (slurm.h).
 * allocation.mode single runs in slurm_alloc.c instead. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/proc.h"
#include "bench/run.h"
#include "bench/slurm.h"

void pd_free_argv(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    pd_str s = {0};
    va_list ap;
    va_start(ap, f);
    pd_str_vprintf(&s, f, ap);
    va_end(ap);
    return pd_str_take(&s);
}

/* true when the script's #SBATCH header sets a time limit (--time, -t) */
static bool script_sets_time(const char *path)
{
    char *text = pd_read_file(path, NULL);
    bool found = false;
    for (char *line = text; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (!strncmp(line, "#SBATCH", 7)) {
            const char *a = line + 7;
            a += strspn(a, " \t");
            /* --time=, --time V, -tV, -t V; not --time-min */
            found = (!strncmp(a, "--time", 6) && (a[6] == '=' || a[6] == ' ' || a[6] == '\t')) ||
                    (!strncmp(a, "-t", 2) && !isalpha((unsigned char)a[2]));
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return found;
}

char **pd_slurm_submit_argv(const pd_bench_run *run, const pd_bench_task *t)
{
    /* slurm_options.commands.submit's words (default sbatch), then ours */
    char *args[7];
    size_t n = 0;
    char name[128];
    snprintf(name, sizeof name, "%s_exec_%04d_r%d",
             t->script_idx < pd_bench_nscripts(&run->cfg) ? pd_bench_script_at(&run->cfg, t->script_idx)->name
                                                          : run->cfg.script.name,
             t->exec_id, t->repetition);
    args[n++] = pd_strdup("--parsable");
    args[n++] = fmt("--job-name=%s", name);
    args[n++] = fmt("--chdir=%s", t->dir);
    args[n++] = fmt("--output=%s/%s", t->dir, "stdout");
    args[n++] = fmt("--error=%s/%s", t->dir, "stderr");
    char *script = fmt("%s/%s", t->dir, pd_bench_task_script(run, t));
    if (run->cfg.timeout_s > 0 && script && !script_sets_time(script)) {
        /* SLURM's limit is in minutes: rounded up, it ends the job no sooner */
        long s = (long)ceil(run->cfg.timeout_s);
        args[n++] = fmt("--time=%ld:%02ld", s / 60, s % 60);
    }
    args[n++] = script;
    char err[128];
    return pd_slurm_submit_command(run, args, n, err, sizeof err);
}

pd_task_state pd_slurm_state(const char *state)
{
    static const char *failed[] = {"FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
                                   "PREEMPTED", "REVOKED", "SPECIAL_EXIT"};
    if (!strcmp(state, "COMPLETED"))
        return PD_TASK_SUCCEEDED;
    if (!strncmp(state, "CANCELLED", 9))
        return PD_TASK_CANCELLED;
    if (!strcmp(state, "TIMEOUT"))
        return PD_TASK_TIMED_OUT;
    for (size_t i = 0; i < PD_ARRAY_LEN(failed); i++)
        if (!strcmp(state, failed[i]))
            return PD_TASK_FAILED;
    return PD_TASK_PENDING; /* PENDING, RUNNING, COMPLETING, CONFIGURING, SUSPENDED, REQUEUED, ... */
}

static void cancel_all(pd_bench_run *run, void *ctx)
{
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_RUNNING || !t->job_id[0])
            continue;
        pd_slurm_cancel(run, t->job_id, true);
        t->state = PD_TASK_CANCELLED;
        pd_bench_task_finished(run, t);
    }
}

static int submit(pd_bench_run *run, pd_bench_task *t)
{
    char **argv = pd_slurm_submit_argv(run, t);
    if (!argv)
        return -1;
    char what[64], id[sizeof t->job_id];
    snprintf(what, sizeof what, "exec_%04d rep %d", t->exec_id, t->repetition);
    if (pd_slurm_submit(run, argv, t->dir, what, id, sizeof id) != 0)
        return -1;
    snprintf(t->job_id, sizeof t->job_id, "%s", id);
    return 0;
}

/* Marks the tasks squeue no longer lists (or lists as finished) as done. */
static void poll_jobs(pd_bench_run *run, int *running)
{
    pd_str ids = {0};
    for (size_t k = 0; k < run->ntasks; k++)
        if (run->tasks[k].state == PD_TASK_RUNNING && run->tasks[k].job_id[0])
            pd_str_printf(&ids, "%s%s", ids.len ? "," : "", run->tasks[k].job_id);
    if (!ids.len)
        return;
    pd_str out = {0};
    char err[256];
    /* the built-in squeue asks about every job at once; a status template
     * (slurm_options.commands.status) is asked job by job, below */
    char *argv[] = {"squeue", "-h", "-o", "%i %T", "-j", ids.data, NULL};
    int st = run->cfg.slurm.status ? 0 : pd_slurm_exec(run, argv, NULL, &out, NULL, 0, err, sizeof err);
    pd_str_free(&ids);
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_RUNNING || !t->job_id[0] || pd_proc_interrupted())
            continue;
        bool listed_active = false;
        if (run->cfg.slurm.status) {
            char state[64];
            listed_active = pd_slurm_queue_state(run, t->job_id, state, sizeof state, err, sizeof err) == 1 &&
                            pd_slurm_state(state) == PD_TASK_PENDING;
        } else if (st == 0 && out.data) {
            for (const char *p = out.data; (p = strstr(p, t->job_id)); p++) {
                bool start = p == out.data || p[-1] == '\n';
                size_t n = strlen(t->job_id);
                if (start && p[n] == ' ') {
                    char state[64] = "";
                    sscanf(p + n + 1, "%63s", state);
                    listed_active = pd_slurm_state(state) == PD_TASK_PENDING;
                    break;
                }
            }
        }
        if (listed_active)
            continue;
        pd_task_state fs = PD_TASK_PENDING;
        int code = -1;
        char raw[64] = "";
        if (pd_slurm_final_state(run, t->job_id, &fs, &code, raw, sizeof raw) != 0) {
            /* squeue does not list it and neither sacct nor scontrol knows it:
             * give the controller a few polls (it may be restarting), then
             * count the job as lost. */
            if (++t->unknown_polls < 10)
                continue;
            fprintf(stderr, "paddiser bench: job %s vanished without a final state (no squeue, sacct or scontrol "
                            "record)\n", t->job_id);
            fs = PD_TASK_FAILED;
        } else {
            t->unknown_polls = 0;
        }
        if (fs == PD_TASK_PENDING)
            continue;
        t->state = fs;
        t->exit_code = code;
        if (fs == PD_TASK_SUCCEEDED && code != 0)
            t->state = PD_TASK_FAILED;
        t->end = pd_now();
        (*running)--;
        pd_bench_task_finished(run, t);
    }
    pd_str_free(&out);
}

void pd_bench_end_slurm_attempt(const pd_bench_run *run, const pd_bench_task *t, const char *job_id)
{
    /* single-allocation mode: every repetition of the allocation names its
     * job; asked about once */
    static char last[64];
    if (!strcmp(last, job_id))
        return;
    snprintf(last, sizeof last, "%s", job_id);
    char err[256], state[64];
    int q = pd_slurm_queue_state(run, job_id, state, sizeof state, err, sizeof err);
    if (q < 0)
        fprintf(stderr, "paddiser bench: warning: exec_%04d rep %d: cannot tell whether its previous job %s is still "
                        "queued or running (status command failed%s%s): it may run alongside the new attempt\n",
                t->exec_id, t->repetition, job_id, *err ? ": " : "", err);
    if (q == 1 && pd_slurm_state(state) == PD_TASK_PENDING) {
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: its previous job %s is still queued or running; "
                        "scancel before the repetition runs again\n", t->exec_id, t->repetition, job_id);
        pd_slurm_cancel(run, job_id, false);
    }
}

static int start_slurm(pd_bench_run *run, pd_bench_task *t, void *ctx)
{
    if (submit(run, t) != 0)
        return -1;
    pd_bench_task_status(run, t); /* now with the job id */
    if (!run->quiet)
        fprintf(stderr, "paddiser bench: exec_%04d rep %d submitted as job %s\n", t->exec_id, t->repetition,
                t->job_id);
    return 0;
}

/* Sleeps one poll interval (Ctrl-C wakes us), then asks SLURM. */
static void poll_after_interval(pd_bench_run *run, int *running, void *ctx)
{
    double interval_s = *(const double *)ctx;
    double until = pd_monotonic() + interval_s;
    while (!pd_proc_interrupted() && pd_monotonic() < until)
        pd_proc_wait_signal(until - pd_monotonic());
    if (!pd_proc_interrupted())
        poll_jobs(run, running);
}

int pd_exec_slurm(pd_bench_run *run, int parallel, double poll_interval_s)
{
    if (run->cfg.slurm.single)
        return pd_exec_slurm_single(run, poll_interval_s);
    pd_executor ex = {.start = start_slurm, .collect = poll_after_interval, .cancel = cancel_all,
                      .ctx = &poll_interval_s};
    return pd_exec_run(run, parallel, &ex);
}
