/* SLURM commands for the executors (slurm.h): templates as IOPS 3.5.8 reads
 * slurm_options.commands (shlex.split, then "{job_id}"), bounded runs, and
 * what the answers say. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/proc.h"
#include "bench/slurm.h"

/* "{job_id}" in w replaced by id (a new heap string). */
static char *substitute(const char *w, const char *id)
{
    static const char key[] = "{job_id}";
    pd_str s = {0};
    for (const char *p = w; *p;) {
        const char *hit = id ? strstr(p, key) : NULL;
        if (!hit) {
            pd_str_printf(&s, "%s", p);
            break;
        }
        pd_str_printf(&s, "%.*s%s", (int)(hit - p), p, id);
        p = hit + sizeof key - 1;
    }
    return s.data ? pd_str_take(&s) : pd_strdup("");
}

static bool push_word(char ***argv, size_t *n, pd_str *w, const char *id)
{
    char **grown = realloc(*argv, (*n + 2) * sizeof **argv);
    if (!grown)
        return false;
    *argv = grown;
    grown[*n] = substitute(w->data ? w->data : "", id);
    grown[*n + 1] = NULL;
    pd_str_free(w);
    return grown[(*n)++] != NULL;
}

char **pd_slurm_words(const char *tmpl, const char *job_id, char *err, size_t errlen)
{
    char **argv = calloc(1, sizeof *argv);
    size_t n = 0;
    pd_str w = {0};
    bool in_word = false;
    const char *why = NULL;
    for (const char *p = tmpl; argv && *p && !why; p++) {
        if (isspace((unsigned char)*p)) {
            if (in_word && !push_word(&argv, &n, &w, job_id))
                why = "out of memory";
            in_word = false;
            continue;
        }
        in_word = true;
        if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end)
                why = "no closing quotation";
            else
                pd_str_printf(&w, "%.*s", (int)(end - p - 1), p + 1);
            p = end ? end : p;
        } else if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1] && strchr("\\\"$`", p[1]))
                    p++;
                pd_str_printf(&w, "%c", *p);
            }
            if (!*p) {
                why = "no closing quotation";
                p--;
            }
        } else if (*p == '\\') {
            if (!p[1])
                why = "no escaped character";
            else
                pd_str_printf(&w, "%c", *++p);
        } else {
            pd_str_printf(&w, "%c", *p);
        }
    }
    if (argv && !why && in_word && !push_word(&argv, &n, &w, job_id))
        why = "out of memory";
    if (!why && argv && n == 0)
        why = "no command";
    pd_str_free(&w);
    if (!argv || why) {
        snprintf(err, errlen, "%s", why ? why : "out of memory");
        pd_free_argv(argv);
        return NULL;
    }
    return argv;
}

int pd_slurm_exec(const pd_bench_run *run, char *const argv[], const char *cwd, pd_str *out, pd_str *errout,
                  int flags, char *err, size_t errlen)
{
    pd_proc_opts o = {.cwd = cwd, .out = out, .errout = errout, .timeout_s = run->cfg.slurm_command_timeout_s,
                      .uninterruptible = flags & PD_SLURM_CANCELLING};
    err[0] = '\0';
    int st = pd_proc_exec(argv, &o, err, errlen);
    if (st == PD_PROC_TIMED_OUT && !(flags & PD_SLURM_CALLER_SAYS_WHY))
        fprintf(stderr, "paddiser bench: %s (benchmark.slurm_options.command_timeout)\n", err);
    return st;
}

char **pd_slurm_submit_command(const pd_bench_run *run, char **args, size_t nargs, char *err, size_t errlen)
{
    char **argv = pd_slurm_words(run->cfg.slurm.submit ? run->cfg.slurm.submit : PD_SLURM_DEFAULT_SUBMIT, NULL, err,
                                 errlen);
    size_t n = 0;
    while (argv && argv[n])
        n++;
    char **grown = argv ? realloc(argv, (n + nargs + 1) * sizeof *argv) : NULL;
    bool made = grown != NULL;
    for (size_t i = 0; i < nargs; i++)
        made &= args[i] != NULL;
    if (!made) {
        if (grown)
            snprintf(err, errlen, "out of memory");
        pd_free_argv(grown ? grown : argv);
        for (size_t i = 0; i < nargs; i++)
            free(args[i]);
        return NULL;
    }
    memcpy(grown + n, args, nargs * sizeof *args);
    grown[n + nargs] = NULL;
    return grown;
}

int pd_slurm_submit(const pd_bench_run *run, char **argv, const char *cwd, const char *what, char *job,
                    size_t joblen)
{
    pd_str out = {0}, errout = {0};
    char err[256] = "";
    int st = pd_slurm_exec(run, argv, cwd, &out, &errout, PD_SLURM_CALLER_SAYS_WHY, err, sizeof err);
    int rc = 0;
    if (st != 0 || !pd_slurm_parse_job_id(out.data, job, joblen)) {
        fprintf(stderr, "paddiser bench: %s failed for %s: %s\n", argv[0], what,
                st < 0 ? err : errout.data && *pd_trim(errout.data) ? errout.data : "no job id returned");
        rc = -1;
    }
    pd_free_argv(argv);
    pd_str_free(&out);
    pd_str_free(&errout);
    return rc;
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

bool pd_slurm_parse_job_id(const char *out, char *id, size_t idlen)
{
    if (!out)
        return false;
    /* the last non-empty line */
    const char *line = NULL, *end = NULL;
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        const char *e = nl ? nl : p + strlen(p);
        const char *a = p;
        while (a < e && isspace((unsigned char)*a))
            a++;
        const char *b = e;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (b > a) {
            line = a;
            end = b;
        }
        p = nl ? nl + 1 : e;
    }
    if (!line)
        return false;
    const char *semi = memchr(line, ';', (size_t)(end - line));
    const char *cand_end = semi ? semi : end;
    const char *cand = line;
    while (cand_end > cand && isspace((unsigned char)cand_end[-1]))
        cand_end--;
    const char *found = NULL;
    size_t flen = 0;
    if (all_digits(cand, (size_t)(cand_end - cand))) {
        found = cand;
        flen = (size_t)(cand_end - cand);
    } else if ((cand = strstr(out, "Submitted batch job "))) {
        cand += 20;
        flen = strspn(cand, "0123456789");
        found = flen ? cand : NULL;
    }
    if (!found) { /* "... 12345" */
        const char *w = end;
        while (w > line && !isspace((unsigned char)w[-1]))
            w--;
        if (all_digits(w, (size_t)(end - w))) {
            found = w;
            flen = (size_t)(end - w);
        }
    }
    if (!found || flen >= idlen)
        return false;
    memcpy(id, found, flen);
    id[flen] = '\0';
    return true;
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n))
            return true;
    return false;
}

/* The state word after "ID " on a line of the built-in squeue's output. */
static bool listed_state(const char *out, const char *job_id, char *state, size_t len)
{
    size_t n = strlen(job_id);
    for (const char *p = out ? out : ""; (p = strstr(p, job_id)); p++)
        if ((p == out || p[-1] == '\n') && p[n] == ' ') {
            char fmt[16];
            snprintf(fmt, sizeof fmt, "%%%zus", len - 1);
            state[0] = '\0';
            sscanf(p + n + 1, fmt, state);
            return state[0] != '\0';
        }
    return false;
}

int pd_slurm_queue_state(const pd_bench_run *run, const char *job_id, char *state, size_t len, char *err,
                         size_t errlen)
{
    const char *tmpl = run->cfg.slurm.status;
    char **argv = tmpl ? pd_slurm_words(tmpl, job_id, err, errlen) : NULL;
    char *builtin[] = {"squeue", "-h", "-o", "%i %T", "-j", (char *)job_id, NULL};
    if (tmpl && !argv)
        return -1;
    pd_str out = {0}, errout = {0};
    int st = pd_slurm_exec(run, argv ? argv : builtin, NULL, &out, &errout, PD_SLURM_CALLER_SAYS_WHY, err, errlen);
    pd_free_argv(argv);
    int rc;
    if (st == 0) {
        if (tmpl) { /* IOPS: the first line is the state, none when it is not queued */
            char *first = out.data ? pd_trim(out.data) : NULL;
            char fmt[16];
            snprintf(fmt, sizeof fmt, "%%%zus", len - 1);
            state[0] = '\0';
            if (first && *first)
                sscanf(first, fmt, state);
            rc = state[0] ? 1 : 0;
        } else {
            rc = listed_state(out.data, job_id, state, len) ? 1 : 0;
        }
    } else if (st > 0 && errout.data && contains_nocase(errout.data, "invalid job id")) {
        rc = 0; /* squeue exits 1 with "Invalid job id" for a job it no longer knows */
    } else {
        if (st > 0)
            snprintf(err, errlen, "exit %d%s%s", st, errout.data ? ": " : "", errout.data ? pd_trim(errout.data) : "");
        rc = -1;
    }
    pd_str_free(&out);
    pd_str_free(&errout);
    return rc;
}

/* "2:0" -> 2; "0:9" (killed by signal 9) -> 137. */
static int parse_exit_code(const char *s)
{
    int code = 0, sig = 0;
    if (sscanf(s, "%d:%d", &code, &sig) < 1)
        return -1;
    return sig ? 128 + sig : code;
}

/* The value of the word KEY=value in text (KEY at its start or after
 * whitespace, so ExitCode= is not DerivedExitCode=), or NULL. */
static const char *word_value(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; (p = strstr(p, key)); p++)
        if (p == text || isspace((unsigned char)p[-1]))
            return p + n;
    return NULL;
}

int pd_slurm_final_state(const pd_bench_run *run, const char *job, pd_task_state *state, int *exit_code, char *raw,
                         size_t rawlen)
{
    char err[256];
    pd_str out = {0};
    char *sacct[] = {"sacct", "-n", "-X", "-P", "-o", "JobID,State,ExitCode", "-j", (char *)job, NULL};
    if (pd_slurm_exec(run, sacct, NULL, &out, NULL, 0, err, sizeof err) == 0 && out.data) {
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
    const char *tmpl = run->cfg.slurm.info;
    char **argv = tmpl ? pd_slurm_words(tmpl, job, err, sizeof err) : NULL;
    char *scontrol[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
    int rc = -1;
    if ((!tmpl || argv) && pd_slurm_exec(run, argv ? argv : scontrol, NULL, &out, NULL, 0, err, sizeof err) == 0 &&
        out.data) {
        const char *js = word_value(out.data, "JobState="), *ec = word_value(out.data, "ExitCode=");
        char st[64];
        if (js && sscanf(js, "%63[A-Z_]", st) == 1) {
            snprintf(raw, rawlen, "%s", st);
            *state = pd_slurm_state(st);
            *exit_code = ec ? parse_exit_code(ec) : -1;
            rc = 0;
        }
    }
    pd_free_argv(argv);
    pd_str_free(&out);
    return rc;
}

int pd_slurm_cancel(const pd_bench_run *run, const char *job_id, bool cancelling)
{
    char err[256] = "";
    const char *tmpl = run->cfg.slurm.cancel;
    char **argv = tmpl ? pd_slurm_words(tmpl, job_id, err, sizeof err) : NULL;
    char *builtin[] = {"scancel", (char *)job_id, NULL};
    int st = -1;
    if (!tmpl || argv)
        st = pd_slurm_exec(run, argv ? argv : builtin, NULL, NULL, NULL,
                           PD_SLURM_CALLER_SAYS_WHY | (cancelling ? PD_SLURM_CANCELLING : 0), err, sizeof err);
    if (st != 0)
        fprintf(stderr, "paddiser bench: %s %s failed%s%s\n", argv ? argv[0] : "scancel", job_id, err[0] ? ": " : "",
                err);
    pd_free_argv(argv);
    return st == 0 ? 0 : -1;
}
