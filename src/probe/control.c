/* paddiser-probe start / stop: the two commands the injected block runs (see
 * inject.c). They replace what the block used to do with ~16 shell
 * processes and a poll loop (issue #18):
 *
 *   start  writes __iops_node_launcher.sh and the sampler wrappers (mode 755,
 *          through an mkstemp name and rename, never through a planted link),
 *          creates each enabled sampler's sentinel (O_EXCL | O_NOFOLLOW),
 *          forks this node's samplers (no exec: the child runs the sampler
 *          loop of run.c), waits until the CPU and I/O samplers have taken
 *          their baseline sample (so what the run script does next is inside
 *          the sampled window), runs the launcher for the other nodes only in
 *          a multi-node job, and prints every PID for stop.
 *   stop   removes the sentinels (the remote samplers' stop condition),
 *          sends SIGUSR1 to this node's samplers (each takes its closing
 *          sample, writes and closes its files and exits) and waits for them
 *          on pidfds, so the script goes on as soon as the last one has
 *          exited; remote launches get up to STOP_WAIT_S, then SIGTERM.
 *
 * Neither ever fails the benchmark: what cannot be written is skipped
 * silently (the benchmark then runs unprobed) and both exit 0 unless used
 * wrongly. */
#include "probe/control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cliopt.h"
#include "common/util.h"
#include "probe/inject.h"
#include "probe/probe.h"

extern char **environ;

#define STOP_WAIT_S 2.0 /* how long stop waits for a sampler before SIGTERM */
#define READY_WAIT_S 5.0 /* how long start waits for the samplers' baselines at most */
#define MAX_PIDS 64

int pd_probe_ready_fd = -1;

static const struct {
    const char *kind;
    const char *sentinel;
} KINDS[3] = {{"cpu", "__iops_trace_running"}, {"gpu", "__iops_gpu_trace_running"}, {"io", "__iops_io_trace_running"}};

enum { OPT_DIR = 2000, OPT_ATTEMPT, OPT_INTERVAL, OPT_WATCH_PID, OPT_CPU, OPT_GPU, OPT_IO, OPT_IO_PATH };

static void start_usage(FILE *out)
{
    fprintf(out, "usage: paddiser-probe start --dir DIR --attempt ID [--cpu] [--gpu] [--io-path P ...]\n"
                 "                            [--interval S] [--watch-pid PID]\n"
                 "Writes the node launcher and the sampler wrappers into DIR, creates the sentinels,\n"
                 "starts this node's samplers (and the other nodes' ones in a multi-node job) and\n"
                 "prints their PIDs for 'paddiser-probe stop'. Used by the injected block.\n"
                 "options:\n"
                 "      --dir DIR        directory of the wrappers, sentinels and traces\n"
                 "      --attempt ID     attempt id (1-128 of A-Z a-z 0-9 . _ - + @ : =)\n"
                 "      --cpu, --gpu     start the CPU/memory, the GPU sampler\n"
                 "      --io-path P      start the I/O sampler on P (repeat for more)\n"
                 "      --interval S     seconds between samples (default 1)\n"
                 "      --watch-pid PID  the samplers stop as well once PID is gone\n"
                 "  -h, --help           this help\n");
}

static void stop_usage(FILE *out)
{
    fprintf(out, "usage: paddiser-probe stop --dir DIR --attempt ID [--cpu] [--gpu] [--io] [PID ...]\n"
                 "Removes the sentinels of the given samplers, signals the PIDs that are this node's\n"
                 "samplers of that attempt (closing sample) and waits for all PIDs to exit\n"
                 "(at most %.0f s, then SIGTERM). Used by the injected block's exit handler.\n"
                 "options:\n"
                 "      --dir DIR        directory of the sentinels\n"
                 "      --attempt ID     attempt id\n"
                 "      --cpu, --gpu, --io  the samplers whose sentinels go\n"
                 "  -h, --help           this help\n",
            STOP_WAIT_S);
}

/* DIR/NAME.ATTEMPT (or DIR/NAME with attempt NULL); false when too long. */
static bool path_in(char *buf, size_t len, const char *dir, const char *name, const char *attempt)
{
    int n = attempt ? snprintf(buf, len, "%s/%s.%s", dir, name, attempt) : snprintf(buf, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len;
}

/* text as DIR/NAME, mode 755, atomically: an mkstemp name then rename, which
 * replaces a link at NAME instead of writing through it. Silent on failure
 * (an unwritable directory means an unprobed run, not an error). */
static bool write_script(const char *dir, const char *name, const pd_str *text)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    if (!text->data || !path_in(path, sizeof path, dir, name, NULL) ||
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp)
        return false;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = fchmod(fd, 0755) == 0;
    for (size_t off = 0; ok && off < text->len;) {
        ssize_t w = write(fd, text->data + off, text->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += w > 0 ? (size_t)w : 0;
    }
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        return true;
    unlink(tmp);
    return false;
}

/* The sentinel is ours when we create it, or when a regular file is already
 * there (a resumed attempt); a planted link or anything else is left alone. */
static bool make_sentinel(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    struct stat st;
    return errno == EEXIST && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_this_host(const char *name, const char *full, const char *shortname)
{
    size_t n = strcspn(name, ".");
    return strcmp(name, full) == 0 || (strlen(shortname) == n && strncmp(name, shortname, n) == 0);
}

/* True when the job spans other nodes, so the launcher has something to do.
 * Mirrors the launcher's own tests (SLURM, then OAR, then PBS); a one-node
 * job saves the launcher's sh, scontrol and uname processes. */
static bool multi_node_job(void)
{
    const char *job = getenv("SLURM_JOB_ID"), *list = getenv("SLURM_JOB_NODELIST");
    if (job && *job && list && *list) {
        const char *n = getenv("SLURM_JOB_NUM_NODES");
        if (!n || !*n)
            n = getenv("SLURM_NNODES");
        return !(n && strcmp(n, "1") == 0);
    }
    const char *file = getenv("OAR_NODEFILE");
    if (!file || !*file || access(file, R_OK) != 0)
        file = getenv("PBS_NODEFILE");
    if (!file || !*file || access(file, R_OK) != 0)
        return false;
    char *text = pd_read_file(file, NULL);
    if (!text)
        return false;
    char full[256] = "", shortname[256];
    gethostname(full, sizeof full - 1);
    pd_short_hostname(shortname, sizeof shortname);
    bool other = false;
    for (char *line = strtok(text, "\n"); line && !other; line = strtok(NULL, "\n")) {
        line = pd_trim(line);
        other = *line && !is_this_host(line, full, shortname);
    }
    free(text);
    return other;
}

/* Runs `sh LAUNCHER WRAPPER ATTEMPT "" --remote-only` and copies the PIDs it
 * prints to stdout. */
static void launch_remote(const char *launcher, const char *wrapper, const char *attempt)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    char *args[] = {(char *)"sh", (char *)launcher, (char *)wrapper, (char *)attempt, (char *)"",
                    (char *)"--remote-only", NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "sh", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc == 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(pfd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
            for (ssize_t i = 0; i < n; i++)
                putchar(buf[i] == '\n' ? ' ' : buf[i]);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(pfd[0]);
}

/* Reads fd until EOF: every sampler forked has closed its end of the
 * readiness pipe (baseline taken, or exited). Bounded by READY_WAIT_S, so a
 * sampler stuck in its setup delays the run, never holds it. */
static void wait_ready(int fd)
{
    double deadline = pd_monotonic() + READY_WAIT_S;
    for (;;) {
        double left = deadline - pd_monotonic();
        if (left <= 0)
            return;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        char buf[64];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return; /* EOF: all ready */
    }
}

int pd_probe_start(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"attempt", required_argument, NULL, OPT_ATTEMPT},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"watch-pid", required_argument, NULL, OPT_WATCH_PID},
        {"cpu", no_argument, NULL, OPT_CPU},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"io-path", required_argument, NULL, OPT_IO_PATH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser-probe start";
    bool on[3] = {false, false, false};
    const char *dir = NULL, *attempt = NULL, *interval_arg = "1", *watch_arg = NULL;
    double interval = 1.0;
    long watch = 0;
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    size_t npaths = 0;
    int c, rc = -1;
    if (!paths) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        return 1;
    }
    optind = 0;
    while (rc < 0 && (c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_DIR: dir = optarg; break;
        case OPT_ATTEMPT: attempt = optarg; break;
        case OPT_INTERVAL:
            interval_arg = optarg;
            if (!pd_opt_double(cmd, "--interval", optarg, 0, 86400, &interval) || interval == 0)
                rc = interval == 0 ? pd_opt_error(cmd, "--interval must be > 0") : 2;
            break;
        case OPT_WATCH_PID:
            watch_arg = optarg;
            if (!pd_opt_long(cmd, "--watch-pid", optarg, 1, INT_MAX, &watch))
                rc = 2;
            break;
        case OPT_CPU: on[0] = true; break;
        case OPT_GPU: on[1] = true; break;
        case OPT_IO_PATH:
            on[2] = true;
            paths[npaths++] = optarg;
            break;
        case 'h':
            start_usage(stdout);
            rc = 0;
            break;
        default: rc = 2;
        }
    }
    if (rc < 0 && optind < argc)
        rc = pd_opt_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (rc < 0 && (!dir || !*dir))
        rc = pd_opt_error(cmd, "--dir is required");
    if (rc < 0 && (!attempt || !pd_probe_name_ok(attempt, 128)))
        rc = pd_opt_error(cmd, "--attempt is required (1-128 of A-Z a-z 0-9 . _ - + @ : =)");
    if (rc >= 0) {
        free(paths);
        return rc;
    }

    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    pd_probe_inject_cfg cfg = {.cpu = on[0], .gpu = on[1], .io = on[2], .interval_s = interval, .probe_bin = self,
                               .dir = dir, .io_paths = paths, .n_io_paths = npaths};
    pd_str text = {0};
    pd_probe_launcher_text(&text);
    bool wrote = write_script(dir, "__iops_node_launcher.sh", &text);
    pid_t pids[3];
    int npids = 0;
    bool started[3] = {false, false, false};
    /* The samplers' shared pipe: each holds both ends at PD_PROBE_WAIT_FD
     * (read) and PD_PROBE_WAIT_FD + 1 (write) until it exits. The exit
     * handler opens /proc/PID/PD_PROBE_WAIT_FD and reads: EOF comes when the
     * last sampler has exited. The read end's number is the lower, so it is
     * closed first at exit: the handler never opens a read end with no writer
     * left (such an open would block). */
    int wait_pipe[2] = {-1, -1};
    if (pipe2(wait_pipe, O_CLOEXEC) != 0)
        wait_pipe[0] = wait_pipe[1] = -1;
    /* The readiness pipe: each sampler holds the write end until it has its
     * baseline (pd_probe_ready_fd, closed in run.c), so reading the read end
     * to EOF waits for all of them. Without it the sampler, about to go to
     * nice 19, could take its baseline only after a short run had ended
     * (under load, or a run of a few ms): its closing sample then measured
     * the time after the run, or came too soon after the baseline to be
     * taken at all, and the run had no trace. */
    int ready_pipe[2] = {-1, -1};
    if (pipe2(ready_pipe, O_CLOEXEC) != 0)
        ready_pipe[0] = ready_pipe[1] = -1;
    for (int k = 0; k < 3 && wrote; k++) {
        if (!on[k])
            continue;
        pd_str_clear(&text);
        pd_probe_wrapper_text(&text, &cfg, KINDS[k].kind);
        char sentinel[PATH_MAX];
        if (!write_script(dir, pd_probe_wrapper_name(KINDS[k].kind), &text) ||
            !path_in(sentinel, sizeof sentinel, dir, KINDS[k].sentinel, attempt) || !make_sentinel(sentinel))
            continue;
        /* The sampler: this command line run as `paddiser-probe KIND ...` in
         * a forked child, its stdout off the caller's $(...) pipe. */
        const char *sargv[16 + 2 * (size_t)argc];
        int sargc = 0;
        sargv[sargc++] = "paddiser-probe";
        sargv[sargc++] = KINDS[k].kind;
        sargv[sargc++] = "--dir";
        sargv[sargc++] = dir;
        sargv[sargc++] = "--attempt";
        sargv[sargc++] = attempt;
        sargv[sargc++] = "--interval";
        sargv[sargc++] = interval_arg;
        if (watch_arg) {
            sargv[sargc++] = "--watch-pid";
            sargv[sargc++] = watch_arg;
        }
        for (size_t i = 0; k == 2 && i < npaths; i++) {
            sargv[sargc++] = "--io-path";
            sargv[sargc++] = paths[i];
        }
        sargv[sargc] = NULL;
        fflush(stdout);
        fflush(stderr);
        /* Forked with the stop signals blocked: a stop that comes before the
         * sampler has set its handlers stays pending instead of killing it. */
        sigset_t stop_sigs, old_mask;
        sigemptyset(&stop_sigs);
        sigaddset(&stop_sigs, SIGTERM);
        sigaddset(&stop_sigs, SIGINT);
        sigaddset(&stop_sigs, SIGHUP);
        sigaddset(&stop_sigs, SIGUSR1);
        sigprocmask(SIG_BLOCK, &stop_sigs, &old_mask);
        pid_t pid = fork();
        if (pid == 0) {
            if (wait_pipe[0] >= 0 && dup2(wait_pipe[0], PD_PROBE_WAIT_FD) >= 0 &&
                dup2(wait_pipe[1], PD_PROBE_WAIT_FD + 1) >= 0) {
                fcntl(PD_PROBE_WAIT_FD, F_SETFD, FD_CLOEXEC); /* not for nvidia-smi */
                fcntl(PD_PROBE_WAIT_FD + 1, F_SETFD, FD_CLOEXEC);
            }
            if (wait_pipe[0] >= 0 && wait_pipe[0] != PD_PROBE_WAIT_FD && wait_pipe[0] != PD_PROBE_WAIT_FD + 1)
                close(wait_pipe[0]);
            if (wait_pipe[1] >= 0 && wait_pipe[1] != PD_PROBE_WAIT_FD && wait_pipe[1] != PD_PROBE_WAIT_FD + 1)
                close(wait_pipe[1]);
            if (ready_pipe[0] >= 0)
                close(ready_pipe[0]);
            pd_probe_ready_fd = ready_pipe[1];
            int nul = open("/dev/null", O_RDWR);
            if (nul >= 0) {
                dup2(nul, 0);
                dup2(nul, 1);
                if (nul > 2)
                    close(nul);
            }
            _exit(pd_probe_main(sargc, (char **)sargv));
        }
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        if (pid > 0) {
            pids[npids++] = pid;
            started[k] = true;
        }
    }
    if (wait_pipe[0] >= 0) {
        close(wait_pipe[0]);
        close(wait_pipe[1]);
    }
    if (ready_pipe[0] >= 0) {
        close(ready_pipe[1]);
        wait_ready(ready_pipe[0]);
        close(ready_pipe[0]);
    }
    /* One line: this node's samplers, then after '+' the remote launches. */
    for (int i = 0; i < npids; i++)
        printf("%s%ld", i ? " " : "", (long)pids[i]);
    if (npids > 0 && multi_node_job()) {
        char launcher[PATH_MAX], wrapper[PATH_MAX];
        path_in(launcher, sizeof launcher, dir, "__iops_node_launcher.sh", NULL);
        printf(" +");
        fflush(stdout);
        for (int k = 0; k < 3; k++)
            if (started[k] && path_in(wrapper, sizeof wrapper, dir, pd_probe_wrapper_name(KINDS[k].kind), NULL))
                launch_remote(launcher, wrapper, attempt);
    }
    if (npids > 0)
        printf("\n");
    fflush(stdout);
    pd_str_free(&text);
    free(paths);
    return 0;
}

/* ---- stop ---- */

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Whether PID is still the process start printed: its command line names
 * dir and attempt (so a PID reused by an unrelated process is left alone).
 * *ours: it is a paddiser-probe sampler (this binary), not a remote launch. */
static bool is_ours(pid_t pid, const char *dir, const char *attempt, const char *self, bool *ours)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false; /* gone, or a zombie */
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    if (!strstr(buf, dir) || !strstr(buf, attempt))
        return false;
    char exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%ld/exe", (long)pid);
    ssize_t m = readlink(path, exe, sizeof exe - 1);
    exe[m > 0 ? m : 0] = '\0';
    *ours = m > 0 && strcmp(exe, self) == 0;
    return true;
}

static bool alive(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return false;
    char path[64], st[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    ssize_t n = read(fd, st, sizeof st - 1);
    close(fd);
    st[n > 0 ? n : 0] = '\0';
    const char *p = strrchr(st, ')');
    return !(p && (p[2] == 'Z' || p[2] == 'X')); /* a zombie has exited */
}

int pd_probe_stop(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, OPT_DIR},
        {"attempt", required_argument, NULL, OPT_ATTEMPT},
        {"cpu", no_argument, NULL, OPT_CPU},
        {"gpu", no_argument, NULL, OPT_GPU},
        {"io", no_argument, NULL, OPT_IO},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "paddiser-probe stop";
    bool on[3] = {false, false, false};
    const char *dir = NULL, *attempt = NULL;
    int c, rc = -1;
    optind = 0;
    while (rc < 0 && (c = pd_opt_next(cmd, argc, argv, "h", longopts)) != -1) {
        switch (c) {
        case OPT_DIR: dir = optarg; break;
        case OPT_ATTEMPT: attempt = optarg; break;
        case OPT_CPU: on[0] = true; break;
        case OPT_GPU: on[1] = true; break;
        case OPT_IO: on[2] = true; break;
        case 'h':
            stop_usage(stdout);
            rc = 0;
            break;
        default: rc = 2;
        }
    }
    if (rc < 0 && (!dir || !*dir))
        rc = pd_opt_error(cmd, "--dir is required");
    if (rc < 0 && (!attempt || !pd_probe_name_ok(attempt, 128)))
        rc = pd_opt_error(cmd, "--attempt is required (1-128 of A-Z a-z 0-9 . _ - + @ : =)");
    if (rc >= 0)
        return rc;

    /* The sentinels first: remote samplers stop on them. Only regular files
     * (a link planted at the name is not ours). */
    for (int k = 0; k < 3; k++) {
        char path[PATH_MAX];
        struct stat st;
        if (on[k] && path_in(path, sizeof path, dir, KINDS[k].sentinel, attempt) && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode))
            unlink(path);
    }

    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    struct pollfd pfd[MAX_PIDS];
    pid_t pid[MAX_PIDS];
    int np = 0;
    for (int i = optind; i < argc && np < MAX_PIDS; i++) {
        if (strcmp(argv[i], "+") == 0)
            continue; /* start's separator of the remote launches */
        long v;
        char *end;
        errno = 0;
        v = strtol(argv[i], &end, 10);
        if (errno || *end || v <= 1 || v > INT_MAX)
            continue;
        /* The pidfd first, then the identity check: the pidfd cannot be
         * reused, so what is checked is what gets signalled and waited on. */
        int fd = pidfd_open_((pid_t)v);
        bool ours = false;
        if (!is_ours((pid_t)v, dir, attempt, self, &ours)) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        if (ours)
            kill((pid_t)v, SIGUSR1); /* closing sample, files closed, exit */
        pid[np] = (pid_t)v;
        pfd[np] = (struct pollfd){.fd = fd, .events = POLLIN};
        np++;
    }
    double deadline = pd_monotonic() + STOP_WAIT_S;
    for (;;) {
        int left = 0;
        bool need_slices = false;
        for (int i = 0; i < np; i++) {
            if (pid[i] <= 0)
                continue;
            if (pfd[i].fd >= 0 ? (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 : !alive(pid[i])) {
                pid[i] = 0;
                if (pfd[i].fd >= 0)
                    close(pfd[i].fd);
                pfd[i].fd = -1;
                continue;
            }
            left++;
            need_slices |= pfd[i].fd < 0; /* no pidfd (kernel < 5.3): poll kill(0) */
        }
        double t = deadline - pd_monotonic();
        if (left == 0 || t <= 0)
            break;
        int ms = (int)(t * 1000) + 1;
        if (need_slices && ms > 5)
            ms = 5;
        for (int i = 0; i < np; i++)
            pfd[i].revents = 0;
        if (poll(pfd, (nfds_t)np, ms) < 0 && errno != EINTR)
            break;
    }
    for (int i = 0; i < np; i++) {
        if (pid[i] > 0)
            kill(pid[i], SIGTERM);
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
    }
    return 0;
}
