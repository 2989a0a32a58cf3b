#include "bench/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/expr.h"
#include "bench/proc.h"

char *pd_find_in_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path || strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? pd_strdup(prog) : NULL;
    char *copy = pd_strdup(path);
    char *save = NULL, *found = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found; d = strtok_r(NULL, ":", &save)) {
        pd_str s = {0};
        pd_str_printf(&s, "%s/%s", *d ? d : ".", prog);
        if (s.data && access(s.data, X_OK) == 0)
            found = pd_str_take(&s);
        else
            pd_str_free(&s);
    }
    free(copy);
    return found;
}

static char *json_to_text(json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: return pd_strdup(json_string_value(v));
    case JSON_INTEGER: snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v)); return pd_strdup(buf);
    case JSON_REAL: pd_format_float(buf, sizeof buf, json_real_value(v)); return pd_strdup(buf);
    case JSON_TRUE: return pd_strdup("True");
    case JSON_FALSE: return pd_strdup("False");
    case JSON_NULL: return NULL;
    default: return json_dumps(v, JSON_COMPACT);
    }
}

/* Top-level key first, then a dotted path through nested objects. */
static json_t *json_find(json_t *obj, const char *name)
{
    json_t *v = json_object_get(obj, name);
    if (v || !strchr(name, '.'))
        return v;
    char *copy = pd_strdup(name), *save = NULL;
    json_t *cur = obj;
    for (char *part = copy ? strtok_r(copy, ".", &save) : NULL; part && cur; part = strtok_r(NULL, ".", &save))
        cur = json_is_object(cur) ? json_object_get(cur, part) : NULL;
    free(copy);
    return cur;
}

size_t pd_metrics_from_text(const char *text, const char *const *names, size_t n, char **values)
{
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        values[i] = NULL;
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (root && json_is_object(root)) {
        for (size_t i = 0; i < n; i++) {
            json_t *v = json_find(root, names[i]);
            if (v && (values[i] = json_to_text(v)))
                found++;
        }
        json_decref(root);
        return found;
    }
    json_decref(root);
    char *copy = pd_strdup(text), *save = NULL;
    for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *key = pd_trim(line), *val = pd_trim(eq + 1);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(key, names[i])) {
                if (!values[i])
                    found++;
                free(values[i]);
                values[i] = pd_strdup(val);
            }
    }
    free(copy);
    return found;
}

static const char *py_wrapper =
    "import importlib.util, json, os, sys\n"
    "spec = importlib.util.spec_from_file_location('paddiser_parser', sys.argv[1])\n"
    "mod = importlib.util.module_from_spec(spec)\n"
    "mod.os_env = dict(os.environ)\n"
    "for k, v in json.loads(sys.argv[3] if len(sys.argv) > 3 else '{}').items():\n"
    "    setattr(mod, k, v)\n"
    "spec.loader.exec_module(mod)\n"
    "res = mod.parse(sys.argv[2])\n"
    "if not isinstance(res, dict):\n"
    "    sys.exit('parse() must return a dict, got %s' % type(res).__name__)\n"
    "json.dump(res, sys.stdout, default=str)\n";

int pd_metrics_parse_file(const char *path, const char *python_parser, const char *log_path,
                          const char *const *names, size_t n, char **values, char *err, size_t errlen)
{
    return pd_metrics_parse_file_ctx(path, python_parser, log_path, NULL, 0, names, n, values, err, errlen);
}

/* The last line of what a parser wrote on stderr: the end of the log file
 * (read from its tail only), or of the captured text. */
static void last_line(const char *log_path, pd_str *errout, char *buf, size_t len)
{
    buf[0] = '\0';
    if (log_path) {
        int fd = open(log_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            off_t from = st.st_size > (off_t)len - 1 ? st.st_size - (off_t)len + 1 : 0;
            ssize_t got = pread(fd, buf, len - 1, from);
            buf[got > 0 ? got : 0] = '\0';
        }
        if (fd >= 0)
            close(fd);
    } else if (errout->data) {
        snprintf(buf, len, "%s", errout->data);
    }
    char *tail = pd_trim(buf), *nl = strrchr(tail, '\n');
    memmove(buf, nl ? nl + 1 : tail, strlen(nl ? nl + 1 : tail) + 1);
}

/* What parse() returns is read into memory up to this size; its stderr goes
 * to the log file as it comes. */
#define PARSER_MAX_OUTPUT (64u << 20)

static int run_python_parser(const char *py, const char *path, const char *python_parser, const char *log_path,
                             const char *context_json, double timeout_s, const char *const *names, size_t n,
                             char **values, char *err, size_t errlen)
{
    char *argv[] = {(char *)py, "-c", (char *)py_wrapper, (char *)python_parser, (char *)path,
                    (char *)(context_json ? context_json : "{}"), NULL};
    pd_str out = {0}, errout = {0};
    pd_proc_opts o = {.out = &out, .err_path = log_path, .errout = log_path ? NULL : &errout,
                      .max_capture = PARSER_MAX_OUTPUT + 1, .timeout_s = timeout_s};
    int st = pd_proc_exec(argv, &o, err, errlen);
    struct stat ls;
    if (log_path && lstat(log_path, &ls) == 0 && S_ISREG(ls.st_mode) && ls.st_size == 0)
        unlink(log_path); /* kept only when the parser wrote something */
    int rc;
    if (st > 0) {
        char last[512];
        last_line(log_path, &errout, last, sizeof last);
        snprintf(err, errlen, "parser_script failed (exit %d): %s", st, last);
        rc = -1;
    } else if (st == 0 && out.len > PARSER_MAX_OUTPUT) {
        snprintf(err, errlen, "parser_script: parse() returned more than %u MiB", PARSER_MAX_OUTPUT >> 20);
        rc = -1;
    } else if (st == 0) {
        rc = (int)pd_metrics_from_text(out.data ? out.data : "{}", names, n, values);
    } else {
        rc = st; /* could not start (err), timed out or interrupted (err says which) */
    }
    pd_str_free(&out);
    pd_str_free(&errout);
    return rc;
}

int pd_metrics_parse_file_ctx(const char *path, const char *python_parser, const char *log_path,
                              const char *context_json, double timeout_s, const char *const *names, size_t n,
                              char **values, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        values[i] = NULL;
    if (access(path, R_OK) != 0) {
        snprintf(err, errlen, "cannot read metrics file %s: %s", path, strerror(errno));
        return -1;
    }
    char *py = python_parser ? pd_find_in_path("python3") : NULL;
    if (py) {
        int rc = run_python_parser(py, path, python_parser, log_path, context_json, timeout_s, names, n, values, err,
                                   errlen);
        free(py);
        return rc;
    }
    /* no parser script, or no python3: the native reader */
    char *text = pd_read_file(path, NULL);
    if (!text) {
        snprintf(err, errlen, "cannot read metrics file %s: %s", path, pd_read_strerror(errno));
        return -1;
    }
    size_t found = pd_metrics_from_text(text, names, n, values);
    free(text);
    return (int)found;
}
