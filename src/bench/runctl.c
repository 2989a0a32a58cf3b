/* Run control of `paddiser bench` (runctl.h): --fail-fast/--max-fail,
 * --fail-on-missing-metric and the check that the command's program
 * exists. */
#include "bench/runctl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/runlog.h"

/* bash's builtins and reserved words: found without a file. */
static const char *const shell_words[] = {
    ".", ":", "[", "[[", "{", "!", "alias", "bg", "bind", "break", "builtin", "caller", "case", "cd", "command",
    "compgen", "complete", "compopt", "continue", "coproc", "declare", "dirs", "disown", "do", "echo", "enable",
    "eval", "exec", "exit", "export", "false", "fc", "fg", "for", "function", "getopts", "hash", "help", "history",
    "if", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
    "readonly", "return", "select", "set", "shift", "shopt", "source", "suspend", "test", "time", "times", "trap",
    "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
};

/* NAME=value at the start of a simple command (an assignment, not a program). */
static bool is_assignment(const char *w, size_t n)
{
    const char *eq = memchr(w, '=', n);
    if (!eq || eq == w)
        return false;
    for (const char *p = w; p < eq; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (p > w && *p >= '0' && *p <= '9')))
            return false;
    return true;
}

void pd_command_program(const char *command, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *p = command ? command : "";
    for (;;) {
        p += strspn(p, " \t\r\n");
        size_t n = strcspn(p, " \t\r\n");
        if (!n)
            return;
        if (is_assignment(p, n)) {
            p += n;
            continue;
        }
        /* what the shell would expand or redirect: not checkable here */
        for (size_t i = 0; i < n; i++)
            if (strchr("$`'\"\\*?<>|;&()#~", p[i]))
                return;
        if (n >= len)
            return;
        memcpy(buf, p, n);
        buf[n] = '\0';
        return;
    }
}

static bool executable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool pd_program_exists(const char *prog)
{
    for (size_t i = 0; i < PD_ARRAY_LEN(shell_words); i++)
        if (!strcmp(prog, shell_words[i]))
            return true;
    if (strchr(prog, '/'))
        return prog[0] != '/' || executable_file(prog); /* relative: may be made by the run */
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        size_t n = strcspn(p, ":");
        char full[PATH_MAX];
        int w = snprintf(full, sizeof full, "%.*s%s%s", (int)n, n ? p : ".", "/", prog);
        if (w > 0 && (size_t)w < sizeof full && executable_file(full))
            return true;
        if (!p[n])
            return false;
        p += n + 1;
    }
}

/* The cached answer for prog: 1 found, 0 not, -1 not asked yet. */
static int checked(const pd_bench_run *run, const char *prog)
{
    const char *s = run->programs_checked.data;
    size_t n = strlen(prog);
    for (const char *p = s; p && (p = strchr(p, '\n'));) {
        p++;
        if (!strncmp(p, prog, n) && p[n] == '\x1f')
            return p[n + 1] == '1';
    }
    return -1;
}

int pd_bench_check_command(pd_bench_run *run, const pd_bench_exec *ex, const char *command, bool dry_run,
                           pd_str *errors)
{
    if (run->ctl.no_program_check || !command)
        return 0;
    char prog[PATH_MAX];
    pd_command_program(command, prog, sizeof prog);
    if (!prog[0])
        return 0;
    /* command.env sets PATH: a bare name is looked up in that PATH, which
     * only the script knows */
    for (size_t i = 0; i < run->cfg.nenv && !strchr(prog, '/'); i++)
        if (!strcmp(run->cfg.env_names[i], "PATH"))
            return 0;
    int known = checked(run, prog);
    if (known == 1)
        return 0;
    bool slurm = run->cfg.executor == PD_EXEC_SLURM;
    if (known == 0)
        return slurm || dry_run ? 0 : -1; /* said once */
    bool found = pd_program_exists(prog);
    /* \x1f: a byte no program name of a command line has */
    pd_str_printf(&run->programs_checked, "\n%s\x1f%d", prog, found);
    if (found)
        return 0;
    const pd_cfg_text *c = &run->cfg.command;
    const char *why = prog[0] == '/' ? "no such executable file" : "not a shell builtin and not on PATH";
    /* slurm: the compute nodes' PATH and modules may differ; --dry-run: a
     * study is often checked on another machine than the one it runs on.
     * Said, not refused. */
    if (slurm || dry_run) {
        fprintf(stderr,
                "paddiser bench: warning: %s:%d: %s: program '%s' not found here (%s; exec_%04d's command: %s); %s\n",
                run->cfg.path, c->line, c->key ? c->key : "command.template", prog, why, ex->id, command,
                slurm ? "the SLURM jobs may still find it" : "a local run here would stop before anything runs");
        return 0;
    }
    pd_str_printf(errors, "%s:%d: %s: program '%s' not found (%s; exec_%04d's command: %s); pass --no-program-check "
                          "if the script itself provides it\n",
                  run->cfg.path, c->line, c->key ? c->key : "command.template", prog, why, ex->id, command);
    return -1;
}

/* The metrics of t's script that it did not produce, as " a b" (empty: none). */
static void missing_metrics(const pd_bench_run *run, const pd_bench_task *t, pd_str *out)
{
    const pd_bench_config *cfg = &run->cfg;
    const pd_bench_script *sc = pd_bench_script_at(cfg, t->script_idx);
    if (!sc->has_parser)
        return;
    for (size_t i = 0; i < sc->nmetrics; i++) {
        bool have = false;
        for (size_t k = 0; k < cfg->nmetrics && !have; k++)
            have = !strcmp(cfg->metrics[k], sc->metrics[i]) && t->metrics && t->metrics[k];
        if (!have)
            pd_str_printf(out, " %s", sc->metrics[i]);
    }
}

void pd_bench_control_finished(pd_bench_run *run, pd_bench_task *t)
{
    if (run->ctl.missing_metric_fails && t->state == PD_TASK_SUCCEEDED) {
        pd_str miss = {0};
        missing_metrics(run, t, &miss);
        if (miss.len) {
            t->state = PD_TASK_FAILED;
            t->error = "metrics missing, --fail-on-missing-metric";
            fprintf(stderr, "paddiser bench: exec_%04d rep %d: failed: metrics missing:%s (--fail-on-missing-metric)\n",
                    t->exec_id, t->repetition, miss.data);
            pd_runlog(run, PD_LOG_WARNING, "exec_%04d rep %d: metrics missing:%s", t->exec_id, t->repetition,
                      miss.data);
        }
        pd_str_free(&miss);
    }
    pd_runlog_task_finished(run, t);
    if (!pd_task_failed(t->state))
        return;
    run->failed_now++;
    if (run->ctl.max_fail > 0 && !run->stop_starting && run->failed_now >= (size_t)run->ctl.max_fail) {
        run->stop_starting = true;
        const char *opt = run->ctl.max_fail == 1 ? "--fail-fast" : "--max-fail";
        fprintf(stderr, "paddiser bench: %zu repetition%s failed (%s): starting no more; those running finish\n",
                run->failed_now, run->failed_now == 1 ? "" : "s", opt);
        pd_runlog(run, PD_LOG_ERROR, "%zu repetition%s failed (%s %ld): starting no more", run->failed_now,
                  run->failed_now == 1 ? "" : "s", opt, run->ctl.max_fail);
    }
}

void pd_bench_control_report(pd_bench_run *run, const char *config_path)
{
    if (!run->stop_starting)
        return;
    size_t not_started = 0;
    for (size_t k = 0; k < run->ntasks; k++)
        not_started += run->tasks[k].state == PD_TASK_PENDING;
    fprintf(stderr,
            "paddiser bench: stopped after %zu failed repetition%s (%s): %zu not started; run them with: "
            "paddiser bench %s --resume %s\n",
            run->failed_now, run->failed_now == 1 ? "" : "s", run->ctl.max_fail == 1 ? "--fail-fast" : "--max-fail",
            not_started, config_path, run->run_dir);
    pd_runlog(run, PD_LOG_ERROR, "stopped early: %zu repetitions not started", not_started);
}

void pd_bench_control_free(pd_bench_run *run)
{
    pd_str_free(&run->programs_checked);
}
