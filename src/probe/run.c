/* paddiser-probe: runs one sampler until its sentinel file disappears.
 *
 *   paddiser-probe cpu --dir DIR --attempt ID [--interval S] [--host NAME]
 *                      [--watch-pid PID] [--samples N]
 *   paddiser-probe gpu ...same...
 *   paddiser-probe io  ...same... --io-path P [--io-path P ...]
 *   paddiser-probe resolve --io-path P [...] [--host NAME]   (targets JSON to stdout)
 *
 * The loop is built to cost little: each sample reads its /proc files into one
 * reused buffer, formats into one reused string and appends it with a single
 * write(); between samples it sleeps in short slices so that a removed
 * sentinel, a dead --watch-pid or SIGTERM stops it promptly. Files appear
 * only once there is a row to put in them. */
#include "probe/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/sysroot.h"
#include "common/util.h"
#include "probe/inject.h"
#include "probe/sample.h"

extern char **environ;

#define PROG "paddiser-probe"
#define SLICE_S 0.1          /* sentinel poll period while sleeping */
#define MIN_FINAL_S 0.05     /* a closing sample needs at least this much new time */
#define SMI_TIMEOUT_S 30.0   /* a hung nvidia-smi is abandoned after this */

typedef enum { K_CPU, K_GPU, K_IO, K_RESOLVE } probe_kind;

typedef struct {
    probe_kind kind;
    const char *dir;
    const char *attempt;
    double interval;
    char host[65];
    long watch_pid;
    long samples; /* stop after this many emitting samples (0: until the sentinel goes) */
    const char **io_paths;
    size_t n_io_paths;
} probe_opts;

typedef struct {
    char *data;
    size_t cap;
} read_buf;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, PROG ": %s\n", msg);
    fprintf(stderr, "usage: " PROG " cpu|gpu|io --dir DIR --attempt ID [--interval S] [--host NAME]\n"
                    "                      [--watch-pid PID] [--samples N] [--io-path P ...]\n"
                    "       " PROG " resolve --io-path P [--io-path P ...] [--host NAME]\n");
    return 2;
}

static bool name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("._-+@:=", *p)))
            return false;
    return true;
}

static int parse_args(int argc, char **argv, probe_opts *o)
{
    *o = (probe_opts){.dir = ".", .interval = 1.0};
    if (argc < 2)
        return usage("missing subcommand");
    const char *sub = argv[1];
    if (strcmp(sub, "cpu") == 0)
        o->kind = K_CPU;
    else if (strcmp(sub, "gpu") == 0)
        o->kind = K_GPU;
    else if (strcmp(sub, "io") == 0)
        o->kind = K_IO;
    else if (strcmp(sub, "resolve") == 0)
        o->kind = K_RESOLVE;
    else {
        fprintf(stderr, PROG ": unknown subcommand '%s'\n", sub);
        return usage(NULL);
    }
    o->io_paths = calloc((size_t)argc, sizeof *o->io_paths);
    if (!o->io_paths) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--dir") == 0 || strcmp(a, "--attempt") == 0 || strcmp(a, "--interval") == 0 ||
                     strcmp(a, "--host") == 0 || strcmp(a, "--watch-pid") == 0 ||
                     strcmp(a, "--samples") == 0 || strcmp(a, "--io-path") == 0;
        if (!takes) {
            fprintf(stderr, PROG ": unknown option '%s'\n", a);
            return usage(NULL);
        }
        if (!v) {
            fprintf(stderr, PROG ": option %s needs a value\n", a);
            return usage(NULL);
        }
        i++;
        if (strcmp(a, "--dir") == 0) {
            o->dir = v;
        } else if (strcmp(a, "--attempt") == 0) {
            if (!name_ok(v, 128)) {
                fprintf(stderr, PROG ": bad --attempt '%s' (1-128 of A-Z a-z 0-9 . _ - + @ : =)\n", v);
                return 2;
            }
            o->attempt = v;
        } else if (strcmp(a, "--interval") == 0) {
            if (!pd_parse_double(v, &o->interval) || !(o->interval >= 0) || o->interval > 86400) {
                fprintf(stderr, PROG ": bad --interval '%s' (seconds, 0 to 86400)\n", v);
                return 2;
            }
        } else if (strcmp(a, "--host") == 0) {
            if (!name_ok(v, 64)) {
                fprintf(stderr, PROG ": bad --host '%s' (1-64 of A-Z a-z 0-9 . _ - + @ : =)\n", v);
                return 2;
            }
            snprintf(o->host, sizeof o->host, "%s", v);
        } else if (strcmp(a, "--watch-pid") == 0) {
            if (!pd_parse_long(v, &o->watch_pid) || o->watch_pid <= 0) {
                fprintf(stderr, PROG ": bad --watch-pid '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "--samples") == 0) {
            if (!pd_parse_long(v, &o->samples) || o->samples <= 0) {
                fprintf(stderr, PROG ": bad --samples '%s' (a positive count)\n", v);
                return 2;
            }
        } else {
            o->io_paths[o->n_io_paths++] = v;
        }
    }
    if (o->kind != K_RESOLVE && !o->attempt)
        return usage("--attempt is required");
    if (o->interval == 0 && o->samples == 0 && o->kind != K_RESOLVE)
        return usage("--interval 0 is only allowed with --samples");
    if ((o->kind == K_IO || o->kind == K_RESOLVE) && o->n_io_paths == 0)
        return usage("io needs at least one --io-path");
    if (o->kind != K_IO && o->kind != K_RESOLVE && o->n_io_paths > 0)
        return usage("--io-path only applies to io");
    if (!o->host[0]) {
        pd_short_hostname(o->host, sizeof o->host);
        for (char *p = o->host; *p; p++) /* keep file names and CSV plain */
            if (!name_ok((char[]){*p, '\0'}, 1))
                *p = '_';
        if (!o->host[0])
            snprintf(o->host, sizeof o->host, "localhost");
    }
    return 0;
}

/* Whole file into the reused buffer (grown, never shrunk). NULL if unreadable. */
static const char *read_into(read_buf *b, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len = 0;
    for (;;) {
        if (b->cap - len < 4096) {
            size_t cap = b->cap ? b->cap * 2 : 65536;
            char *d = realloc(b->data, cap);
            if (!d) {
                close(fd);
                return NULL;
            }
            b->data = d;
            b->cap = cap;
        }
        ssize_t n = read(fd, b->data + len, b->cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return NULL;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    b->data[len] = '\0';
    return b->data;
}

/* ---- output file: opened (and locked) at the first row ---- */

typedef struct {
    char path[PATH_MAX];
    const char *header;
    int fd;
} trace_file;

/* All of data to fd, retrying short writes and EINTR; 0 or -1 with errno. */
static int write_all(int fd, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

/* 0 ok, 1 another sampler of this host/attempt holds the file, -1 error. */
static int trace_open(trace_file *t)
{
    if (t->fd >= 0)
        return 0;
    int fd = open(t->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, PROG ": cannot open %s: %s\n", t->path, strerror(errno));
        return -1;
    }
    /* One sampler per host and attempt even if a launcher started two; a
     * filesystem without locks (ENOLCK) just goes without. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        return 1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0 && write_all(fd, t->header, strlen(t->header)) != 0) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", t->path, strerror(errno));
        close(fd);
        return -1;
    }
    t->fd = fd;
    return 0;
}

static int trace_write(trace_file *t, const pd_str *rows)
{
    if (write_all(t->fd, rows->data, rows->len) != 0) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", t->path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- stop conditions ---- */

typedef enum { RUN_ON, STOP_SENTINEL, STOP_SIGNAL } stop_why;

static stop_why check_stop(const char *sentinel, long watch_pid)
{
    if (g_stop)
        return STOP_SIGNAL;
    if (access(sentinel, F_OK) != 0)
        return STOP_SENTINEL;
    if (watch_pid > 0 && kill((pid_t)watch_pid, 0) != 0 && errno == ESRCH)
        return STOP_SENTINEL; /* the benchmark shell is gone without its exit handler */
    return RUN_ON;
}

static stop_why sleep_until(double deadline, const char *sentinel, long watch_pid)
{
    for (;;) {
        stop_why w = check_stop(sentinel, watch_pid);
        if (w != RUN_ON)
            return w;
        double left = deadline - pd_monotonic();
        if (left <= 0)
            return RUN_ON;
        double s = left < SLICE_S ? left : SLICE_S;
        struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
        nanosleep(&ts, NULL); /* EINTR: loop re-checks g_stop */
    }
}

/* ---- GPU: nvidia-smi ---- */

static bool find_in_path(const char *prog, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return false;
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n > 0 && n + strlen(prog) + 2 <= len) {
            snprintf(out, len, "%.*s/%s", (int)n, p, prog);
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
                return true;
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return false;
}

/* Runs nvidia-smi once; its stdout in b. Returns false when it could not run,
 * failed, or hung past SMI_TIMEOUT_S. */
static bool run_smi(const char *smi, read_buf *b)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *args[] = {(char *)"nvidia-smi", (char *)PD_NVIDIA_SMI_QUERY, (char *)"--format=csv,noheader,nounits",
                    NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, smi, &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        return false;
    }
    size_t len = 0;
    bool ok = true;
    double deadline = pd_monotonic() + SMI_TIMEOUT_S;
    for (;;) {
        if (b->cap - len < 4096) {
            size_t cap = b->cap ? b->cap * 2 : 65536;
            char *d = realloc(b->data, cap);
            if (!d) {
                ok = false;
                break;
            }
            b->data = d;
            b->cap = cap;
        }
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        int pr = poll(&p, 1, 100);
        if (g_stop || pd_monotonic() > deadline) {
            ok = false;
            break;
        }
        if (pr <= 0)
            continue;
        ssize_t n = read(pfd[0], b->data + len, b->cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(pfd[0]);
    if (!ok)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return false;
    b->data[len] = '\0';
    return true;
}

/* ---- the loop ---- */

typedef struct {
    probe_opts *o;
    read_buf a, b;
    pd_str rows;
    pd_cpu_state cpu;
    pd_io_set io;
    char smi[PATH_MAX];
    char path_a[PATH_MAX], path_b[PATH_MAX];
    double last_mono;
    bool have_last;
} sampler;

/* One sample into s->rows; returns rows, 0 for a baseline, -1 when the
 * sources are unusable. */
static int take_sample(sampler *s, char *err, size_t errlen)
{
    pd_str_clear(&s->rows);
    double mono = pd_monotonic(), ts = pd_now();
    double interval = s->have_last ? mono - s->last_mono : 0;
    s->last_mono = mono;
    s->have_last = true;
    switch (s->o->kind) {
    case K_CPU: {
        const char *stat = read_into(&s->a, s->path_a);
        const char *mem = read_into(&s->b, s->path_b);
        if (!stat || !mem) {
            snprintf(err, errlen, "cannot read %.400s", stat ? s->path_b : s->path_a);
            return -1;
        }
        return pd_cpu_sample(&s->cpu, stat, mem, ts, s->o->host, &s->rows, err, errlen);
    }
    case K_GPU:
        if (!run_smi(s->smi, &s->a)) {
            snprintf(err, errlen, "nvidia-smi failed");
            return -1;
        }
        return pd_gpu_format(s->a.data, ts, s->o->host, &s->rows);
    case K_IO: {
        const char *disk = s->path_a[0] ? read_into(&s->a, s->path_a) : NULL;
        const char *nfs = s->path_b[0] ? read_into(&s->b, s->path_b) : NULL;
        if (!disk && !nfs) {
            snprintf(err, errlen, "cannot read %.200s nor %.200s", s->path_a, s->path_b);
            return -1;
        }
        return pd_io_sample(&s->io, disk, nfs, ts, interval, s->o->host, &s->rows);
    }
    default:
        return -1;
    }
}

static int run_resolve(probe_opts *o)
{
    pd_io_set set;
    char err[512];
    if (pd_io_resolve(&set, o->io_paths, o->n_io_paths, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    pd_io_warn(&set, PROG);
    char *json = pd_io_targets_json(&set, o->host);
    pd_io_set_free(&set);
    if (!json) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    fputs(json, stdout);
    free(json);
    return 0;
}

/* Sets up the sampler; 0 ready, 1 nothing to sample (exit 0), -1 error. */
static int setup(sampler *s, trace_file *tf)
{
    probe_opts *o = s->o;
    const char *prefix = o->kind == K_CPU ? "__iops_trace" : o->kind == K_GPU ? "__iops_gpu_trace" : "__iops_io_trace";
    if (snprintf(tf->path, sizeof tf->path, "%s/%s_%s_%s.csv", o->dir, prefix, o->host, o->attempt) >=
        (int)sizeof tf->path) {
        fprintf(stderr, PROG ": --dir is too long\n");
        return -1;
    }
    tf->header = o->kind == K_CPU ? PD_CPU_HEADER : o->kind == K_GPU ? PD_GPU_HEADER : PD_IO_HEADER;
    if (o->kind == K_CPU) {
        pd_proc_path(s->path_a, sizeof s->path_a, "stat");
        pd_proc_path(s->path_b, sizeof s->path_b, "meminfo");
        return 0;
    }
    if (o->kind == K_GPU) /* no supported vendor: skip quietly, no file */
        return find_in_path("nvidia-smi", s->smi, sizeof s->smi) ? 0 : 1;

    char err[512];
    if (pd_io_resolve(&s->io, o->io_paths, o->n_io_paths, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    pd_io_warn(&s->io, PROG);
    char *json = pd_io_targets_json(&s->io, o->host);
    char jpath[PATH_MAX];
    snprintf(jpath, sizeof jpath, "%s/__iops_io_targets_%s_%s.json", o->dir, o->host, o->attempt);
    if (!json || pd_write_file_atomic(jpath, json, strlen(json)) != 0)
        fprintf(stderr, PROG ": cannot write %s: %s\n", jpath, json ? strerror(errno) : "out of memory");
    free(json);
    bool block = false, nfs = false;
    for (size_t i = 0; i < s->io.ntargets; i++) {
        block |= s->io.targets[i].kind == PD_IO_BLOCK;
        nfs |= s->io.targets[i].kind == PD_IO_NFS;
    }
    if (block)
        pd_proc_path(s->path_a, sizeof s->path_a, "diskstats");
    if (nfs)
        pd_proc_path(s->path_b, sizeof s->path_b, "self/mountstats");
    return (block || nfs) ? 0 : 1; /* every path on storage without counters */
}

static int sample_loop(sampler *s, trace_file *tf, const char *sentinel)
{
    probe_opts *o = s->o;
    long emitted = 0;
    int rc = 0;
    char err[512];
    bool first = true;
    double next = pd_monotonic();
    for (;;) {
        int n = take_sample(s, err, sizeof err);
        if (n < 0 && first) {
            /* Nothing readable to begin with: skip quietly (GPU) or say why. */
            if (o->kind != K_GPU)
                fprintf(stderr, PROG ": %s; not sampling\n", err);
            return 0;
        }
        if (n == 0 && first && o->kind == K_GPU)
            return 0; /* nvidia-smi works but lists no GPU */
        first = false;
        if (n > 0) {
            int r = trace_open(tf);
            if (r == 1)
                return 0; /* a twin sampler already writes this file */
            if (r < 0 || trace_write(tf, &s->rows) != 0)
                return 1;
            if (o->samples > 0 && ++emitted >= o->samples)
                break;
        }
        next += o->interval;
        double now = pd_monotonic();
        if (next < now)
            next = now; /* overran (e.g. slow nvidia-smi): no catch-up burst */
        stop_why w = sleep_until(next, sentinel, o->watch_pid);
        if (w == STOP_SIGNAL)
            break;
        if (w == STOP_SENTINEL) {
            /* Closing sample so the tail of the run is not lost (cheap /proc
             * reads only: nvidia-smi may be slow and the exit handler waits). */
            if (o->kind != K_GPU && pd_monotonic() - s->last_mono >= MIN_FINAL_S &&
                take_sample(s, err, sizeof err) > 0 && trace_open(tf) == 0)
                rc = trace_write(tf, &s->rows) == 0 ? 0 : 1;
            break;
        }
    }
    return rc;
}

/* paddiser-probe block --dir DIR [--cpu] [--gpu] [--io-path P ...] [--interval S]
 * [--probe BIN]: prints the injected shell block (tests, debugging). */
static int run_block(int argc, char **argv)
{
    pd_probe_inject_cfg cfg = {.interval_s = 1.0};
    const char **paths = calloc((size_t)argc, sizeof *paths);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    cfg.probe_bin = self;
    int rc = 0;
    for (int i = 2; i < argc && rc == 0 && paths; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--cpu") == 0) {
            cfg.cpu = true;
        } else if (strcmp(a, "--gpu") == 0) {
            cfg.gpu = true;
        } else if (v && strcmp(a, "--dir") == 0) {
            cfg.dir = argv[++i];
        } else if (v && strcmp(a, "--probe") == 0) {
            cfg.probe_bin = argv[++i];
        } else if (v && strcmp(a, "--io-path") == 0) {
            cfg.io = true;
            paths[cfg.n_io_paths++] = argv[++i];
        } else if (v && strcmp(a, "--interval") == 0) {
            if (!pd_parse_double(argv[++i], &cfg.interval_s))
                rc = usage("bad --interval");
        } else {
            fprintf(stderr, PROG ": block: unknown or incomplete option '%s'\n", a);
            rc = 2;
        }
    }
    cfg.io_paths = paths;
    pd_str out = {0};
    char err[256];
    if (!paths) {
        rc = 1;
    } else if (rc == 0 && pd_probe_injection(&out, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": block: %s\n", err);
        rc = 2;
    } else if (rc == 0 && out.data) {
        fputs(out.data, stdout);
    }
    pd_str_free(&out);
    free(paths);
    return rc;
}

int pd_probe_main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "block") == 0)
        return run_block(argc, argv);
    probe_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        free(o.io_paths);
        return rc;
    }
    if (o.kind == K_RESOLVE) {
        rc = run_resolve(&o);
        free(o.io_paths);
        return rc;
    }
    char sentinel[PATH_MAX];
    const char *sname = o.kind == K_CPU ? "__iops_trace_running" : o.kind == K_GPU ? "__iops_gpu_trace_running"
                                                                                  : "__iops_io_trace_running";
    snprintf(sentinel, sizeof sentinel, "%s/%s.%s", o.dir, sname, o.attempt);

    sampler s = {.o = &o};
    trace_file tf = {.fd = -1};
    rc = 0;
    /* A sentinel already gone means the run is over: sample nothing. */
    if (access(sentinel, F_OK) == 0) {
        int r = setup(&s, &tf);
        if (r < 0)
            rc = 1;
        if (r == 0) {
            g_stop = 0;
            struct sigaction sa = {.sa_handler = on_signal}, old_term, old_int, old_hup;
            sigemptyset(&sa.sa_mask); /* no SA_RESTART: sleeps and reads return early */
            sigaction(SIGTERM, &sa, &old_term);
            sigaction(SIGINT, &sa, &old_int);
            sigaction(SIGHUP, &sa, &old_hup);
            (void)setpriority(PRIO_PROCESS, 0, 19); /* nice 19; best effort */
            rc = sample_loop(&s, &tf, sentinel);
            sigaction(SIGTERM, &old_term, NULL);
            sigaction(SIGINT, &old_int, NULL);
            sigaction(SIGHUP, &old_hup, NULL);
        }
    }
    if (tf.fd >= 0)
        close(tf.fd);
    free(s.a.data);
    free(s.b.data);
    pd_str_free(&s.rows);
    pd_cpu_state_free(&s.cpu);
    pd_io_set_free(&s.io);
    free(o.io_paths);
    return rc;
}
