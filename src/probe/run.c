/* paddiser-probe: runs one sampler until its sentinel file disappears.
 *
 *   paddiser-probe cpu --dir DIR --attempt ID [--interval S] [--host NAME]
 *                      [--watch-pid PID] [--samples N]
 *   paddiser-probe gpu ...same...
 *   paddiser-probe io  ...same... --io-path P [--io-path P ...]
 *   paddiser-probe resolve --io-path P [...] [--host NAME]   (targets JSON to stdout)
 *   paddiser-probe block --dir DIR [--cpu] [--gpu] [--io-path P ...]   (the injected block)
 *   paddiser-probe start|stop ...   (what the block runs: control.c)
 *   paddiser-probe [SUBCOMMAND] --help, paddiser-probe --version
 *
 * The loop is built to cost little (issue #18): the /proc files stay open and
 * each sample pread()s them from offset 0 into one reused buffer, formats into
 * one reused string, and rows are written in batches (at most FLUSH_S old,
 * and always before exit). Between samples it sleeps in one ppoll() until the
 * next sample is due; what wakes it early is an event, never a poll: SIGUSR1
 * (or TERM/INT/HUP) from `paddiser-probe stop`, an inotify event for the
 * sentinel's removal, the exit of --watch-pid (a pidfd). Only where those
 * cannot see the change (a sentinel on a network file system, removed by
 * another node; no pidfd) does it look every SLICE_S as before. Any stop takes
 * a closing sample (not for the GPU: nvidia-smi may be slow), so the last
 * interval is not lost; a run stopped before its first row waits for
 * MIN_FINAL_S after the baseline, so every sampled run has a row. Files
 * appear only once there is a row to put in them. */
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
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cliopt.h"
#include "common/sysroot.h"
#include "common/util.h"
#include "probe/control.h"
#include "probe/gpu_source.h"
#include "probe/inject.h"
#include "probe/io_fs.h"
#include "probe/sample.h"
#include "paddiser.h"

extern char **environ;

#define PROG "paddiser-probe"
#define SLICE_S 0.1          /* sentinel poll period where no event tells (network fs, no pidfd) */
#define MIN_FINAL_S 0.02     /* a closing sample needs at least this much new time (2 jiffies) */
#define FLUSH_S 0.25         /* rows wait at most this long in memory... */
#define FLUSH_BYTES 65536    /* ...or until this many bytes */
#define SMI_TIMEOUT_S 30.0   /* a hung nvidia-smi is abandoned after this */
#define MMPMON_TIMEOUT_S 5.0 /* a fs_io_s answer later than this: mmpmon is hung */
#define MMPMON_TRIES 3       /* failures in a row after which GPFS is given up */

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
    int fd; /* the file, kept open between samples */
} read_buf;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig; /* SIGUSR1: the run is over (see end_of_run) */
}

/* Tells `start` (which waits on it before the run script goes on) that this
 * sampler has its baseline, or will take none; then lowers the priority to
 * nice 19 (best effort). The baseline itself is taken at the script's
 * priority, so that `start` does not wait on a nice-19 process under load. */
static void baseline_taken(void)
{
    if (pd_probe_ready_fd >= 0) {
        close(pd_probe_ready_fd);
        pd_probe_ready_fd = -1;
    }
    (void)setpriority(PRIO_PROCESS, 0, 19);
}

/* Sleeps until the monotonic time deadline, whatever signal comes (the stop
 * signals are blocked outside ppoll anyway). */
static void sleep_to(double deadline)
{
    for (double left; (left = deadline - pd_monotonic()) > 0;) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: " PROG " <subcommand> [options]\n"
                 "       " PROG " --help | --version\n"
                 "\n"
                 "Samplers, each until its sentinel DIR/__iops_*trace_running.ID disappears:\n"
                 "  cpu       CPU and memory use (/proc/stat, /proc/meminfo)\n"
                 "  gpu       GPUs (NVML, nvidia-smi, amd-smi, rocm-smi, xpu-smi); none: nothing\n"
                 "  io        block device, NFS, Lustre and GPFS traffic of the --io-path file systems\n"
                 "Tools:\n"
                 "  resolve   the I/O targets of --io-path paths, as JSON on stdout\n"
                 "  block     the probe block paddiser bench injects into run scripts\n"
                 "  start     what the block runs first: wrappers, sentinels, samplers\n"
                 "  stop      what the block runs at exit: closing samples, then exit\n"
                 "\n"
                 "options:\n"
                 "  -h, --help     this help\n"
                 "      --version  print the version and exit\n"
                 "\n"
                 "Run '" PROG " <subcommand> --help' for a subcommand's options.\n"
                 "Exit status: 0 (also when there is nothing to sample), 1 failure, 2 usage error.\n");
}

/* Help of the samplers: KIND, what it samples, the file prefix infix. */
static void sampler_usage(FILE *out, probe_kind kind)
{
    const char *name = kind == K_CPU ? "cpu" : kind == K_GPU ? "gpu" : "io";
    const char *infix = kind == K_CPU ? "" : kind == K_GPU ? "gpu_" : "io_";
    fprintf(out, "usage: " PROG " %s --dir DIR --attempt ID%s [options]\n", name,
            kind == K_IO ? " --io-path P [--io-path P ...]" : "");
    fprintf(out, "Samples %s\n"
                 "into DIR/__iops_%strace_HOST_ID.csv until DIR/__iops_%strace_running.ID\n"
                 "disappears (none there at the start: nothing is sampled).\n",
            kind == K_CPU   ? "CPU and memory use"
            : kind == K_GPU ? "the GPUs (none: nothing is sampled)"
                            : "the block devices, NFS, Lustre and GPFS mounts under the --io-path paths",
            infix, infix);
    fprintf(out, "options:\n"
                 "      --dir DIR        directory of the sentinel and the trace file (default .)\n"
                 "      --attempt ID     attempt id in the file names (1-128 of A-Z a-z 0-9 . _ - + @ : =)\n"
                 "      --interval S     seconds between samples, 0 to 86400 (default 1; 0 needs --samples)\n"
                 "      --host NAME      host name in the rows and the file name (default: short hostname)\n"
                 "      --watch-pid PID  stop as well once process PID is gone\n"
                 "      --samples N      stop after N samples\n");
    if (kind == K_IO)
        fprintf(out, "      --io-path P      a path whose file system is sampled (repeat for more);\n"
                     "                       its targets go to DIR/__iops_io_targets_HOST_ID.json\n"
                     "Lustre: the llite stats under $PADDISER_PROC_ROOT/fs/lustre/llite or\n"
                     "$PADDISER_SYS_ROOT/kernel/debug/lustre/llite; GPFS: one `mmpmon -p -s`\n"
                     "($PADDISER_MMPMON, else on PATH, else /usr/lpp/mmfs/bin), needs root.\n");
    fprintf(out, "  -h, --help           this help\n");
    if (kind == K_GPU)
        fprintf(out, "GPU sources, the first that works is used: NVML (libnvidia-ml.so.1, or\n"
                     "$PADDISER_NVML_LIB), then on PATH nvidia-smi, amd-smi, rocm-smi, xpu-smi;\n"
                     "PADDISER_GPU_SOURCE=nvml|nvidia-smi|amd-smi|rocm-smi|xpu-smi tries only that one.\n"
                     "A value amd-smi, rocm-smi or xpu-smi does not print is left empty; NVML and\n"
                     "nvidia-smi write [N/A].\n");
}

static void resolve_usage(FILE *out)
{
    fprintf(out, "usage: " PROG " resolve --io-path P [--io-path P ...] [--host NAME]\n"
                 "Prints the I/O targets (block devices, NFS mounts) of the paths as JSON;\n"
                 "warnings on stderr.\n"
                 "options:\n"
                 "      --io-path P   a path to resolve (repeat for more)\n"
                 "      --host NAME   host name in the JSON (default: the short hostname)\n"
                 "  -h, --help        this help\n");
}

static void block_usage(FILE *out)
{
    fprintf(out, "usage: " PROG " block --dir DIR [--cpu] [--gpu] [--io-path P ...] [--interval S] [--probe BIN]\n"
                 "Prints the probe block that paddiser bench injects into a run script.\n"
                 "options:\n"
                 "      --dir DIR      the directory the samplers write to\n"
                 "      --cpu          start the CPU and memory sampler\n"
                 "      --gpu          start the GPU sampler\n"
                 "      --io-path P    start the I/O sampler on P (relative: to DIR; repeat for more)\n"
                 "      --interval S   seconds between samples (default 1)\n"
                 "      --probe BIN    the " PROG " the block runs (absolute; default: this one)\n"
                 "      --launcher     print the node launcher script (__iops_node_launcher.sh) instead\n"
                 "  -h, --help         this help\n");
}

bool pd_probe_name_ok(const char *s, size_t max)
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

enum { OPT_DIR = 1000, OPT_ATTEMPT, OPT_INTERVAL, OPT_HOST, OPT_WATCH_PID, OPT_SAMPLES, OPT_IO_PATH,
       OPT_CPU, OPT_GPU, OPT_PROBE, OPT_LAUNCHER };

/* The options of the samplers and resolve (argv[0] is the subcommand).
 * -1 to go on, else the exit status (0 after --help; usage errors reported). */
static int parse_args(probe_kind kind, const char *cmd, int argc, char **argv, probe_opts *o)
{
    static const struct option sampler_opts[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"attempt", required_argument, NULL, OPT_ATTEMPT},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"host", required_argument, NULL, OPT_HOST},
        {"watch-pid", required_argument, NULL, OPT_WATCH_PID},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"help", no_argument, NULL, 'h'},
        {"io-path", required_argument, NULL, OPT_IO_PATH}, /* io only: last */
        {NULL, 0, NULL, 0},
    };
    static const struct option resolve_opts[] = {
        {"io-path", required_argument, NULL, OPT_IO_PATH},
        {"host", required_argument, NULL, OPT_HOST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (probe_opts){.kind = kind, .dir = ".", .interval = 1.0};
    o->io_paths = calloc((size_t)argc, sizeof *o->io_paths);
    if (!o->io_paths) {
        fprintf(stderr, PROG ": out of memory\n");
        return 1;
    }
    struct option opts[PD_ARRAY_LEN(sampler_opts)]; /* cpu and gpu: without --io-path */
    memcpy(opts, sampler_opts, sizeof opts);
    if (kind == K_CPU || kind == K_GPU)
        opts[PD_ARRAY_LEN(opts) - 2] = (struct option){NULL, 0, NULL, 0};
    const struct option *longopts = kind == K_RESOLVE ? resolve_opts : opts;
    int c;
    optind = 0;
    while ((c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_DIR:
            o->dir = optarg;
            break;
        case OPT_ATTEMPT:
            if (!pd_probe_name_ok(optarg, 128)) {
                fprintf(stderr, "%s: bad --attempt '%s' (1-128 of A-Z a-z 0-9 . _ - + @ : =)\n", cmd, optarg);
                return 2;
            }
            o->attempt = optarg;
            break;
        case OPT_INTERVAL:
            if (!pd_opt_double(cmd, "--interval", optarg, 0, 86400, &o->interval))
                return 2;
            break;
        case OPT_HOST:
            if (!pd_probe_name_ok(optarg, 64)) {
                fprintf(stderr, "%s: bad --host '%s' (1-64 of A-Z a-z 0-9 . _ - + @ : =)\n", cmd, optarg);
                return 2;
            }
            snprintf(o->host, sizeof o->host, "%s", optarg);
            break;
        case OPT_WATCH_PID:
            if (!pd_opt_long(cmd, "--watch-pid", optarg, 1, LONG_MAX, &o->watch_pid))
                return 2;
            break;
        case OPT_SAMPLES:
            if (!pd_opt_long(cmd, "--samples", optarg, 1, LONG_MAX, &o->samples))
                return 2;
            break;
        case OPT_IO_PATH:
            o->io_paths[o->n_io_paths++] = optarg;
            break;
        case 'h':
            if (kind == K_RESOLVE)
                resolve_usage(stdout);
            else
                sampler_usage(stdout, kind);
            return 0;
        default:
            return 2;
        }
    }
    if (optind < argc)
        return pd_opt_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (kind != K_RESOLVE && !o->attempt)
        return pd_opt_error(cmd, "--attempt is required");
    if (o->interval == 0 && o->samples == 0 && kind != K_RESOLVE)
        return pd_opt_error(cmd, "--interval 0 is only allowed with --samples");
    if ((kind == K_IO || kind == K_RESOLVE) && o->n_io_paths == 0)
        return pd_opt_error(cmd, "needs at least one --io-path");
    if (!o->host[0]) {
        pd_short_hostname(o->host, sizeof o->host);
        for (char *p = o->host; *p; p++) /* keep file names and CSV plain */
            if (!pd_probe_name_ok((char[]){*p, '\0'}, 1))
                *p = '_';
        if (!o->host[0])
            snprintf(o->host, sizeof o->host, "localhost");
    }
    return -1;
}

/* Opens path for read_into (kept open: no open/close per sample). */
static bool open_source(read_buf *b, const char *path)
{
    b->fd = open(path, O_RDONLY | O_CLOEXEC);
    return b->fd >= 0;
}

/* Whole file from offset 0 into the reused buffer (grown, never shrunk), with
 * pread on the open fd: a /proc seq_file read at offset 0 is generated anew.
 * A read shorter than asked is the end (seq_file fills the buffer while it
 * has records; a regular fixture file too), which saves the extra read that
 * would only return 0. NULL if unreadable. */
static const char *read_into(read_buf *b)
{
    if (b->fd < 0)
        return NULL;
    size_t len = 0;
    for (;;) {
        if (b->cap - len < 4096) {
            size_t cap = b->cap ? b->cap * 2 : 65536;
            char *d = realloc(b->data, cap);
            if (!d)
                return NULL;
            b->data = d;
            b->cap = cap;
        }
        size_t want = b->cap - len - 1;
        ssize_t n = pread(b->fd, b->data + len, want, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return NULL;
        len += (size_t)n;
        if ((size_t)n < want)
            break;
    }
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
    /* never through a link planted in the repetition directory */
    int fd = open(t->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
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

/* What the sleep between samples waits on. */
typedef struct {
    const char *sentinel;
    const char *sentinel_name; /* its last path component, as inotify reports it */
    long watch_pid;
    int inotify_fd;  /* -1: none */
    int pidfd;       /* -1: none (no --watch-pid, or no pidfd_open) */
    bool slices;     /* no event can tell: look every SLICE_S */
    sigset_t wait_mask; /* the mask during ppoll: the stop signals unblocked */
} waiter;

/* File systems where another node may remove the sentinel, which inotify
 * does not report (statfs f_type). */
static bool network_fs(long type)
{
    static const long magic[] = {
        0x6969,     /* NFS */
        0xFF534D42, /* CIFS */
        0xFE534D42, /* SMB2 */
        0x517B,     /* SMB */
        0x0BD00BD0, /* Lustre */
        0x47504653, /* GPFS */
        0x19830326, /* BeeGFS */
        0x00C36400, /* Ceph */
        0x65735546, /* FUSE (sshfs, ...) */
        0x01021997, /* 9p */
        0x5346414F, /* AFS */
        0x6B414653, /* kAFS */
        0x013111A8, /* IBRIX */
        0x73757245, /* Coda */
    };
    for (size_t i = 0; i < PD_ARRAY_LEN(magic); i++)
        if ((unsigned long)type == (unsigned long)magic[i])
            return true;
    return false;
}

static void waiter_open(waiter *w, const char *dir, const char *sentinel, long watch_pid)
{
    w->sentinel = sentinel;
    const char *slash = strrchr(sentinel, '/');
    w->sentinel_name = slash ? slash + 1 : sentinel;
    w->watch_pid = watch_pid;
    w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->inotify_fd >= 0 &&
        inotify_add_watch(w->inotify_fd, dir, IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
        close(w->inotify_fd);
        w->inotify_fd = -1;
    }
    struct statfs sf;
    w->slices = w->inotify_fd < 0 || statfs(dir, &sf) != 0 || network_fs((long)sf.f_type);
    w->pidfd = -1;
    if (watch_pid > 0) {
#ifdef SYS_pidfd_open
        w->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)watch_pid, 0);
#endif
        w->slices |= w->pidfd < 0 && errno != ESRCH;
    }
}

static void waiter_close(waiter *w)
{
    if (w->inotify_fd >= 0)
        close(w->inotify_fd);
    if (w->pidfd >= 0)
        close(w->pidfd);
}

static stop_why check_stop(const waiter *w)
{
    if (g_stop)
        return STOP_SIGNAL;
    if (access(w->sentinel, F_OK) != 0)
        return STOP_SENTINEL;
    if (w->watch_pid > 0 && kill((pid_t)w->watch_pid, 0) != 0 && errno == ESRCH)
        return STOP_SENTINEL; /* the benchmark shell is gone without its exit handler */
    return RUN_ON;
}

/* True when the inotify events read name the sentinel (or the directory
 * itself went); other files' events are drained and ignored. */
static bool sentinel_event(int fd, const char *name)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool hit = false;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            if ((e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW)) ||
                (e->len > 0 && strcmp(e->name, name) == 0))
                hit = true;
            p += sizeof *e + e->len;
        }
    }
    return hit;
}

/* Sleeps until deadline (monotonic) or a stop. The stop signals are blocked
 * outside ppoll, so one sent while a sample is taken is not lost: it is
 * pending and ends the next ppoll at once. */
static stop_why sleep_until(double deadline, waiter *w)
{
    stop_why why = check_stop(w);
    while (why == RUN_ON) {
        double left = deadline - pd_monotonic();
        if (left <= 0)
            return RUN_ON;
        if (w->slices && left > SLICE_S)
            left = SLICE_S;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        struct pollfd pfd[2];
        nfds_t n = 0;
        if (w->inotify_fd >= 0)
            pfd[n++] = (struct pollfd){.fd = w->inotify_fd, .events = POLLIN};
        if (w->pidfd >= 0)
            pfd[n++] = (struct pollfd){.fd = w->pidfd, .events = POLLIN};
        int r = ppoll(pfd, n, &ts, &w->wait_mask);
        if (r < 0 && errno == EINTR)
            why = g_stop ? STOP_SIGNAL : RUN_ON;
        else if (r > 0 || w->slices) {
            bool look = w->slices;
            for (nfds_t i = 0; i < n; i++) {
                if (!pfd[i].revents)
                    continue;
                if (pfd[i].fd == w->pidfd)
                    return STOP_SENTINEL; /* the benchmark shell exited */
                look |= sentinel_event(w->inotify_fd, w->sentinel_name);
            }
            if (look)
                why = check_stop(w);
        }
    }
    return why;
}

/* ---- GPU: the tools (sources in gpu_vendors.c) ---- */

/* Runs a GPU tool once; its stdout in b. Returns false when it could not run,
 * failed, or hung past SMI_TIMEOUT_S. */
static bool run_smi(const char *smi, char *const args[], read_buf *b, const sigset_t *wait_mask)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
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
        struct timespec slice = {0, 100 * 1000000L};
        int pr = ppoll(&p, 1, &slice, wait_mask); /* a stop signal ends it early */
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
    read_buf *lustre;   /* per I/O target: the llite stats file of a Lustre one (fd -1 otherwise) */
    pd_mmpmon mmpmon;   /* running while a GPFS target is sampled */
    char mmpmon_path[PATH_MAX];
    int mmpmon_fails;   /* in a row; MMPMON_TRIES of them end GPFS sampling */
    pd_gpu_source gpu;
    char path_a[PATH_MAX], path_b[PATH_MAX];
    double last_mono;
    bool have_last;
    const sigset_t *wait_mask;
} sampler;

/* Runs a GPU tool for the sources (gpu_vendors.c); ctx is the sampler. */
static const char *gpu_run(void *ctx, const char *path, char *const argv[])
{
    sampler *s = ctx;
    return run_smi(path, argv, &s->a, s->wait_mask) ? s->a.data : NULL;
}

/* The fs_io_s answer of the sampler's mmpmon (started on first use, and
 * again after a failure, up to MMPMON_TRIES failures in a row), or NULL. */
static const char *gpfs_answer(sampler *s)
{
    if (s->mmpmon_fails >= MMPMON_TRIES)
        return NULL;
    const char *ans = NULL;
    if (s->mmpmon.pid > 0 || pd_mmpmon_start(&s->mmpmon, s->mmpmon_path))
        ans = pd_mmpmon_query(&s->mmpmon, MMPMON_TIMEOUT_S, s->wait_mask);
    if (ans) {
        s->mmpmon_fails = 0;
        return ans;
    }
    if (++s->mmpmon_fails >= MMPMON_TRIES)
        fprintf(stderr,
                PROG ": warning: %s -p -s gave no fs_io_s answer %d times in a row (it needs root and a "
                     "running GPFS daemon); GPFS I/O is not measured from now on\n",
                s->mmpmon_path, MMPMON_TRIES);
    return NULL;
}

/* The I/O sources the targets need, read and scanned; -1 when none could be
 * read at all. */
static int io_sample(sampler *s, double ts, double interval, char *err, size_t errlen)
{
    pd_io_set *io = &s->io;
    pd_io_begin(io);
    const char *disk = read_into(&s->a);
    const char *nfs = read_into(&s->b);
    bool any = disk || nfs;
    if (disk)
        pd_io_scan_diskstats(io, disk);
    if (nfs)
        pd_io_scan_mountstats(io, nfs);
    bool lustre = false, gpfs = false;
    for (size_t i = 0; i < io->ntargets; i++) {
        if (io->targets[i].kind == PD_IO_GPFS)
            gpfs = true;
        if (io->targets[i].kind != PD_IO_LUSTRE)
            continue;
        lustre = true;
        const char *stats = read_into(&s->lustre[i]);
        if (stats && pd_lustre_scan(&io->targets[i], stats))
            any = true;
    }
    if (gpfs) {
        const char *ans = gpfs_answer(s);
        if (ans) {
            pd_gpfs_scan(io, ans);
            any = true;
        }
    }
    if (!any) {
        pd_str what = {0}; /* the sources these targets needed */
        const char *names[4] = {s->path_a, s->path_b, lustre ? "the Lustre llite stats" : "",
                                gpfs ? s->mmpmon_path : ""};
        for (int k = 0; k < 4; k++)
            if (*names[k])
                pd_str_printf(&what, "%s%s", what.len ? ", " : "", names[k]);
        snprintf(err, errlen, "no I/O counters readable (%s)", what.data ? what.data : "");
        pd_str_free(&what);
        return -1;
    }
    return pd_io_emit(io, ts, interval, s->o->host, &s->rows);
}

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
        const char *stat = read_into(&s->a);
        const char *mem = read_into(&s->b);
        if (!stat || !mem) {
            snprintf(err, errlen, "cannot read %.400s", stat ? s->path_b : s->path_a);
            return -1;
        }
        return pd_cpu_sample(&s->cpu, stat, mem, ts, s->o->host, &s->rows, err, errlen);
    }
    case K_GPU: {
        int n = pd_gpu_source_sample(&s->gpu, gpu_run, s, ts, s->o->host, &s->rows);
        if (n < 0)
            snprintf(err, errlen, "%s failed", pd_gpu_kind_name(s->gpu.kind));
        return n;
    }
    case K_IO:
        return io_sample(s, ts, interval, err, errlen);
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
        open_source(&s->a, s->path_a); /* unreadable: the first sample says so */
        open_source(&s->b, s->path_b);
        return 0;
    }
    if (o->kind == K_GPU) /* no supported vendor: skip quietly, no file */
        return pd_gpu_source_open(&s->gpu, gpu_run, s) ? 0 : 1;

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
    bool block = false, nfs = false, other = false;
    s->lustre = calloc(s->io.ntargets ? s->io.ntargets : 1, sizeof *s->lustre);
    if (!s->lustre) {
        fprintf(stderr, PROG ": out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < s->io.ntargets; i++) {
        const pd_io_target *t = &s->io.targets[i];
        block |= t->kind == PD_IO_BLOCK;
        nfs |= t->kind == PD_IO_NFS;
        other |= t->kind == PD_IO_LUSTRE || t->kind == PD_IO_GPFS;
        s->lustre[i].fd = -1;
        if (t->kind == PD_IO_LUSTRE && !open_source(&s->lustre[i], t->match))
            fprintf(stderr, PROG ": warning: cannot open %s: %s; the I/O of %s is not measured\n", t->match,
                    strerror(errno), t->paths);
        if (t->kind == PD_IO_GPFS && !*s->mmpmon_path)
            pd_mmpmon_find(s->mmpmon_path, sizeof s->mmpmon_path); /* found at resolve time */
    }
    if (block) {
        pd_proc_path(s->path_a, sizeof s->path_a, "diskstats");
        open_source(&s->a, s->path_a);
    }
    if (nfs) {
        pd_proc_path(s->path_b, sizeof s->path_b, "self/mountstats");
        open_source(&s->b, s->path_b);
    }
    return (block || nfs || other) ? 0 : 1; /* every path on storage without counters */
}

/* SIGUSR1 means the run is over (the injected block's exit handler sends it
 * instead of running `paddiser-probe stop`): once its rows are written and
 * its file closed, the sampler removes this attempt's sentinels, all kinds,
 * so the samplers of the other nodes stop as well. Regular files
 * only: a link planted at a sentinel's name is not ours. */
static void end_of_run(const probe_opts *o)
{
    static const char *const names[3] = {"__iops_trace_running", "__iops_gpu_trace_running",
                                         "__iops_io_trace_running"};
    for (int k = 0; k < 3; k++) {
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s.%s", o->dir, names[k], o->attempt) < (int)sizeof path &&
            lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            unlink(path);
    }
}

/* Rows wait in pend until FLUSH_S has passed since the oldest or FLUSH_BYTES
 * have gathered (at 0.05 s, 5 samples per write), and always before exit.
 * 0 written (or nothing to write), 1 a twin sampler holds the file, -1 error. */
static int flush_rows(trace_file *tf, pd_str *pend)
{
    if (pend->len == 0)
        return 0;
    int r = trace_open(tf);
    if (r != 0)
        return r;
    if (trace_write(tf, pend) != 0)
        return -1;
    pd_str_clear(pend);
    return 0;
}

static int sample_loop(sampler *s, trace_file *tf, waiter *w)
{
    probe_opts *o = s->o;
    long emitted = 0;
    char err[512];
    bool first = true;
    pd_str pend = {0};
    double pend_since = 0;
    double next = pd_monotonic();
    int r = 0;
    bool have_row = false; /* a sample has emitted rows (the baseline emits none) */
    for (;;) {
        int n = take_sample(s, err, sizeof err);
        if (first)
            baseline_taken();
        if (n < 0 && first) {
            /* Nothing readable to begin with: skip quietly (GPU) or say why. */
            if (o->kind != K_GPU)
                fprintf(stderr, PROG ": %s; not sampling\n", err);
            break;
        }
        if (n == 0 && first && o->kind == K_GPU)
            break; /* nvidia-smi works but lists no GPU */
        first = false;
        if (n > 0) {
            have_row = true;
            if (pend.len == 0)
                pend_since = s->last_mono;
            pd_str_appendn(&pend, s->rows.data, s->rows.len);
            if (pend.oom)
                r = -1;
            else if (pend.len >= FLUSH_BYTES || s->last_mono - pend_since >= FLUSH_S)
                r = flush_rows(tf, &pend);
            if (r != 0)
                break;
            if (o->samples > 0 && ++emitted >= o->samples)
                break;
        }
        next += o->interval;
        double now = pd_monotonic();
        if (next < now)
            next = now; /* overran (e.g. slow nvidia-smi): no catch-up burst */
        if (pend.len > 0 && pend_since + FLUSH_S < next) {
            r = flush_rows(tf, &pend); /* do not sit on rows through a long sleep */
            if (r != 0)
                break;
        }
        if (sleep_until(next, w) != RUN_ON) {
            /* Closing sample so the tail of the run is not lost (cheap /proc
             * reads only: nvidia-smi may be slow and stop waits). It needs
             * MIN_FINAL_S behind the previous sample (shares of less than two
             * jiffies mean nothing): skipped after a row, waited for when
             * there is none yet, so a run shorter than MIN_FINAL_S still has
             * its trace (it used to have none: the membw example's smallest
             * case runs in ~17 ms, and check-slurm found no trace for it). */
            if (o->kind != K_GPU && !have_row)
                sleep_to(s->last_mono + MIN_FINAL_S);
            if (o->kind != K_GPU && pd_monotonic() - s->last_mono >= MIN_FINAL_S &&
                take_sample(s, err, sizeof err) > 0)
                pd_str_appendn(&pend, s->rows.data, s->rows.len);
            break;
        }
    }
    if (r == 0)
        r = pend.oom ? -1 : flush_rows(tf, &pend);
    pd_str_free(&pend);
    return r < 0 ? 1 : 0; /* 1 (a twin writes the file) is no failure */
}

/* paddiser-probe block --dir DIR [--cpu] [--gpu] [--io-path P ...] [--interval S]
 * [--probe BIN]: prints the injected shell block (tests, debugging). argv[0]
 * is "block". */
static int run_block(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"cpu", no_argument, NULL, OPT_CPU},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"dir", required_argument, NULL, OPT_DIR},
        {"probe", required_argument, NULL, OPT_PROBE},
        {"io-path", required_argument, NULL, OPT_IO_PATH},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"launcher", no_argument, NULL, OPT_LAUNCHER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = PROG " block";
    bool launcher = false;
    pd_probe_inject_cfg cfg = {.interval_s = 1.0};
    const char **paths = calloc((size_t)argc, sizeof *paths);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    cfg.probe_bin = self;
    int rc = paths ? -1 : 1, c;
    optind = 0;
    while (rc < 0 && (c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_CPU: cfg.cpu = true; break;
        case OPT_LAUNCHER: launcher = true; break;
        case OPT_GPU: cfg.gpu = true; break;
        case OPT_DIR: cfg.dir = optarg; break;
        case OPT_PROBE: cfg.probe_bin = optarg; break;
        case OPT_IO_PATH:
            cfg.io = true;
            paths[cfg.n_io_paths++] = optarg;
            break;
        case OPT_INTERVAL:
            if (!pd_opt_double(cmd, "--interval", optarg, 0, 86400, &cfg.interval_s))
                rc = 2;
            break;
        case 'h':
            block_usage(stdout);
            rc = 0;
            break;
        default:
            rc = 2;
        }
    }
    if (rc < 0 && optind < argc)
        rc = pd_opt_error(cmd, "unexpected argument '%s'", argv[optind]);
    cfg.io_paths = paths;
    pd_str out = {0};
    char err[256];
    if (rc < 0 && launcher) {
        pd_probe_launcher_text(&out);
        rc = out.oom ? 1 : -1;
    }
    if (rc < 0 && !launcher && pd_probe_injection(&out, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        rc = 2;
    } else if (rc < 0) {
        if (out.data)
            fputs(out.data, stdout);
        rc = 0;
    }
    if (rc == 1)
        fprintf(stderr, PROG ": out of memory\n");
    pd_str_free(&out);
    free(paths);
    return rc;
}

int pd_probe_main(int argc, char **argv)
{
    enum { OPT_VERSION = 1100 };
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    static const struct {
        const char *name;
        probe_kind kind;
    } subs[] = {{"cpu", K_CPU}, {"gpu", K_GPU}, {"io", K_IO}, {"resolve", K_RESOLVE}};
    int c;
    optind = 0; /* '+': the options before the subcommand only */
    while ((c = pd_opt_next(PROG, argc, argv, "+h", longopts)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf(PROG " %s\n", pd_version());
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, PROG ": missing subcommand\n");
        usage(stderr);
        return 2;
    }
    const char *sub = argv[optind];
    argc -= optind;
    argv += optind;
    if (strcmp(sub, "block") == 0)
        return run_block(argc, argv);
    if (strcmp(sub, "start") == 0)
        return pd_probe_start(argc, argv);
    if (strcmp(sub, "stop") == 0)
        return pd_probe_stop(argc, argv);
    size_t k = 0;
    while (k < PD_ARRAY_LEN(subs) && strcmp(sub, subs[k].name) != 0)
        k++;
    if (k == PD_ARRAY_LEN(subs)) {
        fprintf(stderr, PROG ": unknown subcommand '%s'\n", sub);
        usage(stderr);
        return 2;
    }
    char cmd[32];
    snprintf(cmd, sizeof cmd, PROG " %s", sub);
    probe_opts o;
    int rc = parse_args(subs[k].kind, cmd, argc, argv, &o);
    if (rc >= 0) { /* --help, a usage error or no memory */
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

    sampler s = {.o = &o, .a.fd = -1, .b.fd = -1};
    trace_file tf = {.fd = -1};
    rc = 0;
    /* The stop signals are blocked except inside the sleep (and nvidia-smi's
     * wait): one that comes while a sample is taken stays pending and ends
     * the next sleep. `start` forks the samplers with them blocked already,
     * so a stop right after the start is not lost either. */
    sigset_t stop_sigs, old_mask, wait_mask;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGTERM);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGHUP);
    sigaddset(&stop_sigs, SIGUSR1);
    sigprocmask(SIG_BLOCK, &stop_sigs, &old_mask);
    wait_mask = old_mask;
    sigdelset(&wait_mask, SIGTERM);
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGHUP);
    sigdelset(&wait_mask, SIGUSR1);
    s.wait_mask = &wait_mask;
    g_stop = 0;
    struct sigaction sa = {.sa_handler = on_signal}, old_sa[4];
    sigemptyset(&sa.sa_mask); /* no SA_RESTART */
    const int sigs[4] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &sa, &old_sa[i]);
    /* The GPU has no baseline (its rows are absolute) and its setup may run
     * a slow vendor tool: `start` does not wait for it. */
    if (o.kind == K_GPU)
        baseline_taken();
    /* A sentinel already gone means the run is over: sample nothing. */
    if (access(sentinel, F_OK) == 0) {
        int r = setup(&s, &tf);
        if (r < 0)
            rc = 1;
        if (r == 0) {
            /* nice 19 once the baseline is taken (baseline_taken) */
            waiter w = {.wait_mask = wait_mask};
            waiter_open(&w, o.dir, sentinel, o.watch_pid);
            rc = sample_loop(&s, &tf, &w);
            waiter_close(&w);
        }
    }
    if (pd_probe_ready_fd >= 0) { /* nothing sampled: `start` waits no longer */
        close(pd_probe_ready_fd);
        pd_probe_ready_fd = -1;
    }
    /* Close the trace before the signals are restored: stop waits for exit. */
    if (tf.fd >= 0)
        close(tf.fd);
    tf.fd = -1;
    /* Only now, with the closing rows written and the file closed: an exit
     * handler that could not wait on the samplers' pipe runs `stop` (which
     * waits) as long as a sentinel is still there. */
    if (g_stop == SIGUSR1)
        end_of_run(&o);
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &old_sa[i], NULL);
    if (g_stop) { /* consume what is pending before unblocking (in-process callers) */
        struct timespec zero = {0, 0};
        while (sigtimedwait(&stop_sigs, NULL, &zero) > 0)
            ;
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    if (s.a.fd >= 0)
        close(s.a.fd);
    if (s.b.fd >= 0)
        close(s.b.fd);
    if (tf.fd >= 0)
        close(tf.fd);
    free(s.a.data);
    free(s.b.data);
    pd_str_free(&s.rows);
    pd_cpu_state_free(&s.cpu);
    pd_mmpmon_stop(&s.mmpmon);
    for (size_t i = 0; s.lustre && i < s.io.ntargets; i++) {
        if (s.lustre[i].fd >= 0)
            close(s.lustre[i].fd);
        free(s.lustre[i].data);
    }
    free(s.lustre);
    pd_io_set_free(&s.io);
    pd_gpu_source_close(&s.gpu);
    free(o.io_paths);
    return rc;
}
