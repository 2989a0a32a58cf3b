/* SLURM executor: one sbatch job per repetition (--parsable, stdout/stderr
 * into the repetition directory), at most `parallel` in flight, polled with
 * squeue; the final state comes from sacct, or from scontrol when the
 * cluster keeps no accounting. Ctrl-C scancels every job in flight. Every
 * SLURM command is bounded by slurm_options.command_timeout. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/proc.h"
#include "bench/run.h"

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

enum {
    CALLER_SAYS_WHY = 1, /* the caller prints err itself */
    CANCELLING = 2       /* scancel after Ctrl-C: not stopped by that Ctrl-C */
};

/* A SLURM command, bounded by benchmark.slurm_options.command_timeout; one
 * that hangs is stopped and named (the caller then treats it as failed). */
static int slurm_cmd(const pd_bench_run *run, char *const argv[], pd_str *out, pd_str *errout, int flags, char *err,
                     size_t errlen)
{
    pd_proc_opts o = {.out = out, .errout = errout, .timeout_s = run->cfg.slurm_command_timeout_s,
                      .uninterruptible = flags & CANCELLING};
    err[0] = '\0';
    int st = pd_proc_exec(argv, &o, err, errlen);
    if (st == PD_PROC_TIMED_OUT && !(flags & CALLER_SAYS_WHY))
        fprintf(stderr, "paddiser bench: %s (benchmark.slurm_options.command_timeout)\n", err);
    return st;
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
    char **argv = calloc(10, sizeof *argv);
    if (!argv)
        return NULL;
    char name[128];
    snprintf(name, sizeof name, "%s_exec_%04d_r%d",
             t->script_idx < pd_bench_nscripts(&run->cfg) ? pd_bench_script_at(&run->cfg, t->script_idx)->name
                                                          : run->cfg.script.name,
             t->exec_id, t->repetition);
    argv[0] = pd_strdup("sbatch");
    argv[1] = pd_strdup("--parsable");
    argv[2] = fmt("--job-name=%s", name);
    argv[3] = fmt("--chdir=%s", t->dir);
    argv[4] = fmt("--output=%s/%s", t->dir, "stdout");
    argv[5] = fmt("--error=%s/%s", t->dir, "stderr");
    char *script = fmt("%s/%s", t->dir, pd_bench_task_script(run, t));
    int n = 6;
    if (run->cfg.timeout_s > 0 && script && !script_sets_time(script)) {
        /* SLURM's limit is in minutes: rounded up, it ends the job no sooner */
        long s = (long)ceil(run->cfg.timeout_s);
        argv[n++] = fmt("--time=%ld:%02ld", s / 60, s % 60);
    }
    argv[n++] = script;
    for (int i = 0; i < n; i++)
        if (!argv[i]) {
            pd_free_argv(argv);
            return NULL;
        }
    return argv;
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

/* "2:0" -> 2; "0:9" (killed by signal 9) -> 137. */
static int parse_exit_code(const char *s)
{
    int code = 0, sig = 0;
    if (sscanf(s, "%d:%d", &code, &sig) < 1)
        return -1;
    return sig ? 128 + sig : code;
}

/* Final state of a job no longer in squeue. Returns 0 when the job is known
 * (state PENDING if it is not finished after all), -1 when neither sacct nor
 * scontrol knows it. */
static int final_state(const pd_bench_run *run, const char *job, pd_task_state *state, int *exit_code, char *raw,
                       size_t rawlen)
{
    char err[256];
    pd_str out = {0};
    char *sacct[] = {"sacct", "-n", "-X", "-P", "-o", "JobID,State,ExitCode", "-j", (char *)job, NULL};
    if (slurm_cmd(run, sacct, &out, NULL, 0, err, sizeof err) == 0 && out.data) {
        char *save = NULL;
        for (char *line = strtok_r(out.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char *f1 = strchr(line, '|');
            char *f2 = f1 ? strchr(f1 + 1, '|') : NULL;
            if (!f1 || !f2)
                continue;
            *f1 = *f2 = '\0';
            if (strcmp(line, job))
                continue;
            char *st = f1 + 1, *sp = strchr(st, ' ');
            if (sp)
                *sp = '\0'; /* "CANCELLED by 0" */
            snprintf(raw, rawlen, "%s", st);
            *state = pd_slurm_state(st);
            *exit_code = parse_exit_code(f2 + 1);
            pd_str_free(&out);
            return 0;
        }
    }
    pd_str_free(&out);
    char *scontrol[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
    if (slurm_cmd(run, scontrol, &out, NULL, 0, err, sizeof err) == 0 && out.data) {
        char *js = strstr(out.data, "JobState="), *ec = strstr(out.data, " ExitCode=");
        if (js) {
            char st[64];
            if (sscanf(js + 9, "%63[A-Z_]", st) == 1) {
                snprintf(raw, rawlen, "%s", st);
                *state = pd_slurm_state(st);
                *exit_code = ec ? parse_exit_code(ec + 10) : -1;
                pd_str_free(&out);
                return 0;
            }
        }
    }
    pd_str_free(&out);
    return -1;
}

static void cancel_all(pd_bench_run *run, void *ctx)
{
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_RUNNING || !t->job_id[0])
            continue;
        char err[256];
        char *argv[] = {"scancel", t->job_id, NULL};
        if (slurm_cmd(run, argv, NULL, NULL, CALLER_SAYS_WHY | CANCELLING, err, sizeof err) != 0)
            fprintf(stderr, "paddiser bench: scancel %s failed%s%s\n", t->job_id, err[0] ? ": " : "", err);
        t->state = PD_TASK_CANCELLED;
        pd_bench_task_finished(run, t);
    }
}

static int submit(pd_bench_run *run, pd_bench_task *t)
{
    char **argv = pd_slurm_submit_argv(run, t);
    if (!argv)
        return -1;
    pd_str out = {0}, errout = {0};
    char err[256] = "";
    int st = slurm_cmd(run, argv, &out, &errout, CALLER_SAYS_WHY, err, sizeof err);
    pd_free_argv(argv);
    char *id = out.data ? pd_trim(out.data) : NULL;
    if (id) {
        char *semi = strchr(id, ';'); /* "id;cluster" */
        if (semi)
            *semi = '\0';
    }
    long idnum;
    int rc = 0;
    if (st != 0 || !id || !pd_parse_long(id, &idnum)) {
        fprintf(stderr, "paddiser bench: sbatch failed for exec_%04d rep %d: %s\n", t->exec_id, t->repetition,
                st < 0 ? err : errout.data && *pd_trim(errout.data) ? errout.data : "no job id returned");
        rc = -1;
    } else {
        snprintf(t->job_id, sizeof t->job_id, "%s", id);
    }
    pd_str_free(&out);
    pd_str_free(&errout);
    return rc;
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
    char *argv[] = {"squeue", "-h", "-o", "%i %T", "-j", ids.data, NULL};
    int st = slurm_cmd(run, argv, &out, NULL, 0, err, sizeof err);
    pd_str_free(&ids);
    for (size_t k = 0; k < run->ntasks; k++) {
        pd_bench_task *t = &run->tasks[k];
        if (t->state != PD_TASK_RUNNING || !t->job_id[0] || pd_proc_interrupted())
            continue;
        bool listed_active = false;
        if (st == 0 && out.data) {
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
        if (final_state(run, t->job_id, &fs, &code, raw, sizeof raw) != 0) {
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
    pd_str out = {0}, errout = {0};
    char err[256];
    char *argv[] = {"squeue", "-h", "-o", "%i %T", "-j", (char *)job_id, NULL};
    int st = slurm_cmd(run, argv, &out, &errout, CALLER_SAYS_WHY, err, sizeof err);
    bool active = false;
    if (st == 0) {
        for (const char *p = out.data ? out.data : ""; (p = strstr(p, job_id)); p++) {
            size_t n = strlen(job_id);
            if ((p == out.data || p[-1] == '\n') && p[n] == ' ') {
                char state[64] = "";
                sscanf(p + n + 1, "%63s", state);
                active = pd_slurm_state(state) == PD_TASK_PENDING;
                break;
            }
        }
    } else if (!(st > 0 && errout.data && strstr(errout.data, "Invalid job id"))) {
        /* squeue exits 1 with "Invalid job id" for a job it no longer knows: gone */
        char *why = st < 0 ? err : errout.data ? pd_trim(errout.data) : "";
        fprintf(stderr, "paddiser bench: warning: exec_%04d rep %d: cannot tell whether its previous job %s is still "
                        "queued or running (squeue %s%s%s): it may run alongside the new attempt\n",
                t->exec_id, t->repetition, job_id, st < 0 ? "failed" : "exited non-zero", *why ? ": " : "", why);
    }
    if (active) {
        fprintf(stderr, "paddiser bench: exec_%04d rep %d: its previous job %s is still queued or running; "
                        "scancel before the repetition runs again\n", t->exec_id, t->repetition, job_id);
        char *cargv[] = {"scancel", (char *)job_id, NULL};
        if (slurm_cmd(run, cargv, NULL, NULL, CALLER_SAYS_WHY, err, sizeof err) != 0)
            fprintf(stderr, "paddiser bench: scancel %s failed%s%s\n", job_id, err[0] ? ": " : "", err);
    }
    pd_str_free(&out);
    pd_str_free(&errout);
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
    pd_executor ex = {.start = start_slurm, .collect = poll_after_interval, .cancel = cancel_all,
                      .ctx = &poll_interval_s};
    return pd_exec_run(run, parallel, &ex);
}
