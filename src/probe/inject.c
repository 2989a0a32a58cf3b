/* The probe block of a generated run_<script>.sh (see inject.h). Plain POSIX
 * sh, safe under `set -eu`: every command that may fail is guarded, so the
 * benchmark never fails because of sampling, and its exit status is kept.
 *
 * At run time the block
 *   1. picks the attempt id (IOPS_ATTEMPT_ID, SLURM_JOB_ID, OAR_JOB_ID,
 *      PBS_JOBID, else $$), made file-name safe with shell builtins (tr and
 *      cut only run for an id that needs them);
 *   2. registers __iops_exit_handler on EXIT (and INT/TERM/HUP);
 *   3. runs `paddiser-probe start` once: it writes the node launcher and the
 *      wrappers (atomically), creates one sentinel per enabled sampler, forks
 *      this node's samplers and, in a multi-node job only, runs the launcher
 *      for the other nodes; it prints the PIDs for the exit handler;
 *   4. at exit sends SIGUSR1 to this node's samplers (each takes its closing
 *      sample, closes its files, removes the sentinels and exits) and reads
 *      their shared pipe through /proc until EOF, i.e. until the last has
 *      exited: no polling, no process. `paddiser-probe stop` runs only for
 *      remote launches to wait for or a sentinel still there.
 * That is 1 paddiser-probe process plus one fork per sampler; the block
 * used to spawn ~16 processes and poll for the samplers' exit (issue #18). */
#include "probe/inject.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probe/control.h"

#define PD_STR_(x) #x
#define PD_STR(x) PD_STR_(x)

/* Redirections on special built-ins (':', 'exec', ...) that fail make a
 * POSIX shell exit, so the block only redirects regular commands. */

/* Appends s single-quoted for sh. */
static void sh_quote(pd_str *out, const char *s)
{
    pd_str_append(out, "'");
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            pd_str_append(out, "'\\''");
        else
            pd_str_appendn(out, p, 1);
    }
    pd_str_append(out, "'");
}

static const char LAUNCHER[] =
    "#!/bin/sh\n"
    "# paddiser: starts a sampler wrapper on every node of the job.\n"
    "# usage: __iops_node_launcher.sh WRAPPER ATTEMPT [WATCH_PID [--remote-only]]\n"
    "# Prints the PIDs of the local processes it started (this node's sampler and\n"
    "# the remote launch commands) for the exit handler. This node is always\n"
    "# sampled; remote launch failures are ignored. Node lists: SLURM (scontrol\n"
    "# show hostnames + srun --overlap), OAR ($OAR_NODEFILE + oarsh), PBS\n"
    "# ($PBS_NODEFILE + ssh -o BatchMode=yes).\n"
    "# A 4th argument --remote-only skips this node (paddiser-probe start runs\n"
    "# this node's sampler itself).\n"
    "w=$1; a=$2; wp=${3:-}\n"
    "if [ \"${4:-}\" != --remote-only ]; then\n"
    "    sh \"$w\" \"$a\" \"$wp\" </dev/null >&2 &\n"
    "    echo $!\n"
    "fi\n"
    "self=$(uname -n 2>/dev/null) || self=localhost\n"
    "is_self() {\n"
    "    case $1 in \"$self\"|\"${self%%.*}\"|\"${SLURMD_NODENAME:-/}\") return 0;; esac\n"
    "    [ \"${1%%.*}\" = \"${self%%.*}\" ]\n"
    "}\n"
    "q() { printf \"'%s'\" \"$(printf '%s' \"$1\" | sed \"s/'/'\\\\\\\\''/g\")\"; }\n"
    "remote_cmd=\"sh $(q \"$w\") $(q \"$a\")\"\n"
    "nodefile=\n"
    "if [ -n \"${SLURM_JOB_ID:-}\" ] && [ -n \"${SLURM_JOB_NODELIST:-}\" ]; then\n"
    "    command -v scontrol >/dev/null 2>&1 && command -v srun >/dev/null 2>&1 || exit 0\n"
    "    others=; n=0\n"
    "    for h in $(scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null); do\n"
    "        is_self \"$h\" && continue\n"
    "        others=${others:+$others,}$h; n=$((n + 1))\n"
    "    done\n"
    "    [ \"$n\" -gt 0 ] || exit 0\n"
    "    # --ntasks too: srun would otherwise take the job's SLURM_NTASKS from the\n"
    "    # environment and start that many samplers (or refuse to start).\n"
    "    srun --overlap --nodes=\"$n\" --ntasks=\"$n\" --ntasks-per-node=1 --nodelist=\"$others\" sh \"$w\" \"$a\" </dev/null >&2 &\n"
    "    echo $!\n"
    "    exit 0\n"
    "elif [ -n \"${OAR_NODEFILE:-}\" ] && [ -r \"$OAR_NODEFILE\" ]; then\n"
    "    nodefile=$OAR_NODEFILE; rsh=oarsh\n"
    "elif [ -n \"${PBS_NODEFILE:-}\" ] && [ -r \"$PBS_NODEFILE\" ]; then\n"
    "    nodefile=$PBS_NODEFILE; rsh=ssh\n"
    "fi\n"
    "[ -n \"$nodefile\" ] || exit 0\n"
    "command -v \"$rsh\" >/dev/null 2>&1 || exit 0\n"
    "for h in $(sort -u \"$nodefile\" 2>/dev/null); do\n"
    "    is_self \"$h\" && continue\n"
    "    if [ \"$rsh\" = ssh ]; then\n"
    "        ssh -o BatchMode=yes \"$h\" \"$remote_cmd\" </dev/null >&2 &\n"
    "    else\n"
    "        oarsh \"$h\" \"$remote_cmd\" </dev/null >&2 &\n"
    "    fi\n"
    "    echo $!\n"
    "done\n"
    "exit 0\n";

void pd_probe_launcher_text(pd_str *out) { pd_str_append(out, LAUNCHER); }

/* Appends the io paths as --io-path options; a relative one is taken relative
 * to dir (remote shells start elsewhere). */
static void io_path_args(pd_str *out, const pd_probe_inject_cfg *cfg)
{
    for (size_t i = 0; i < cfg->n_io_paths; i++) {
        pd_str_append(out, " --io-path ");
        if (cfg->io_paths[i][0] == '/') {
            sh_quote(out, cfg->io_paths[i]);
        } else {
            pd_str rel = {0};
            pd_str_printf(&rel, "%s/%s", cfg->dir, cfg->io_paths[i]);
            sh_quote(out, rel.data ? rel.data : "");
            pd_str_free(&rel);
        }
    }
}

const char *pd_probe_wrapper_name(const char *kind)
{
    return strcmp(kind, "cpu") == 0   ? "__iops_runtime_sampler.sh"
           : strcmp(kind, "gpu") == 0 ? "__iops_runtime_gpu_sampler.sh"
                                      : "__iops_runtime_io_sampler.sh";
}

/* One sampler wrapper: ATTEMPT [WATCH_PID] -> paddiser-probe KIND in the
 * foreground (exec, so the launcher's PID is the probe's). */
void pd_probe_wrapper_text(pd_str *out, const pd_probe_inject_cfg *cfg, const char *kind)
{
    const char *what = strcmp(kind, "cpu") == 0 ? "CPU/memory" : strcmp(kind, "gpu") == 0 ? "GPU" : "I/O";
    char interval[32];
    snprintf(interval, sizeof interval, "%.6g", cfg->interval_s);
    pd_str_printf(out,
                  "#!/bin/sh\n"
                  "# paddiser: %s sampler for one node (started by __iops_node_launcher.sh).\n"
                  "# usage: %s ATTEMPT [WATCH_PID]\n"
                  "# Runs paddiser-probe at nice 19 until __iops_%strace_running.ATTEMPT goes.\n",
                  what, pd_probe_wrapper_name(kind),
                  strcmp(kind, "cpu") == 0 ? "" : strcmp(kind, "gpu") == 0 ? "gpu_" : "io_");
    /* gpu: no shell test for a vendor tool here; paddiser-probe looks for NVML
     * and every supported tool itself and exits 0 quietly when none works. */
    pd_str_append(out, "[ -x ");
    sh_quote(out, cfg->probe_bin);
    pd_str_append(out, " ] || exit 0\nexec ");
    sh_quote(out, cfg->probe_bin);
    pd_str_printf(out, " %s --dir ", kind);
    sh_quote(out, cfg->dir);
    pd_str_printf(out, " --attempt \"$1\" --interval %s", interval);
    if (strcmp(kind, "io") == 0)
        io_path_args(out, cfg);
    pd_str_append(out, " ${2:+--watch-pid \"$2\"} </dev/null\n");
}

int pd_probe_injection(pd_str *out, const pd_probe_inject_cfg *cfg, char *err, size_t errlen)
{
    if (!cfg->io && cfg->n_io_paths > 0) {
        snprintf(err, errlen, "probes.io_paths is set but probes.io_sampling is not enabled");
        return -1;
    }
    if (cfg->io && cfg->n_io_paths == 0) {
        snprintf(err, errlen, "probes.io_sampling needs a non-empty probes.io_paths");
        return -1;
    }
    for (size_t i = 0; i < cfg->n_io_paths; i++)
        if (!cfg->io_paths[i] || !cfg->io_paths[i][0] || strchr(cfg->io_paths[i], '\n')) {
            snprintf(err, errlen, "probes.io_paths entry %zu is empty or holds a newline", i + 1);
            return -1;
        }
    if (!cfg->cpu && !cfg->gpu && !cfg->io)
        return 0;
    if (!(cfg->interval_s > 0) || !isfinite(cfg->interval_s) || cfg->interval_s > 86400) {
        snprintf(err, errlen, "probes.sampling_interval must be a number of seconds in (0, 86400], got %g",
                 cfg->interval_s);
        return -1;
    }
    if (!cfg->probe_bin || cfg->probe_bin[0] != '/') {
        snprintf(err, errlen, "the paddiser-probe path must be absolute (got '%s')",
                 cfg->probe_bin ? cfg->probe_bin : "");
        return -1;
    }
    if (!cfg->dir || !cfg->dir[0] || strchr(cfg->dir, '\n') || strchr(cfg->probe_bin, '\n')) {
        snprintf(err, errlen, "the trace directory is empty or holds a newline");
        return -1;
    }
    char interval[32];
    snprintf(interval, sizeof interval, "%.6g", cfg->interval_s);
    pd_str kinds = {0}; /* the --cpu --gpu --io flags of start and stop */
    if (cfg->cpu)
        pd_str_append(&kinds, " --cpu");
    if (cfg->gpu)
        pd_str_append(&kinds, " --gpu");

    pd_str_append(out, "# >>> paddiser resource sampling (generated; never fails the benchmark) >>>\n"
                       "__iops_dir=");
    sh_quote(out, cfg->dir);
    pd_str_append(out, "\n__iops_probe=");
    sh_quote(out, cfg->probe_bin);
    pd_str_append(
        out,
        "\n"
        "__iops_attempt=${IOPS_ATTEMPT_ID:-${SLURM_JOB_ID:-${OAR_JOB_ID:-${PBS_JOBID:-$$}}}}\n"
        "# file-name safe, at most 128 characters; builtins unless the id needs fixing\n"
        "case $__iops_attempt in *[!A-Za-z0-9._+@:=-]*)\n"
        "    __iops_attempt=$(printf '%s' \"$__iops_attempt\" | tr -c 'A-Za-z0-9._+@:=-' '_') 2>/dev/null || true;;\n"
        "esac\n"
        "[ \"${#__iops_attempt}\" -le 128 ] ||\n"
        "    __iops_attempt=$(printf '%s' \"$__iops_attempt\" | cut -c1-128) 2>/dev/null || true\n"
        "[ -n \"$__iops_attempt\" ] || __iops_attempt=$$\n"
        "__iops_pids=\n"
        "__iops_started=\n"
        "# SIGUSR1 tells this node's samplers that the run is over: they take their\n"
        "# closing sample, close their files, remove the sentinels (the other\n"
        "# nodes' samplers stop on that) and exit. Reading their shared pipe through\n"
        "# /proc returns at EOF, once the last one has exited: no polling, no\n"
        "# process. Only remote launches to wait for, or a sentinel that no sampler\n"
        "# here removed, need paddiser-probe stop.\n"
        "__iops_exit_handler() {\n"
        "    __iops_rc=$?\n"
        "    [ -z \"${__iops_exit_done:-}\" ] || return 0\n"
        "    __iops_exit_done=1\n"
        "    [ -n \"$__iops_started\" ] || return \"$__iops_rc\"\n"
        "    __iops_local=${__iops_pids%%+*}\n"
        "    [ -z \"$__iops_local\" ] || kill -s USR1 $__iops_local 2>/dev/null || true\n"
        "    for __iops_p in $__iops_local; do\n"
        "        read -r __iops_x 2>/dev/null </proc/$__iops_p/fd/" PD_STR(PD_PROBE_WAIT_FD) " || true\n"
        "    done\n"
        "    __iops_left=\n"
        "    case $__iops_pids in *+*) __iops_left=1;; esac\n"
        "    for __iops_s in");
    for (int k = 0; k < 3; k++)
        if (k == 0 ? cfg->cpu : k == 1 ? cfg->gpu : cfg->io)
            pd_str_printf(out, " %s", k == 0 ? "__iops_trace_running" : k == 1 ? "__iops_gpu_trace_running"
                                                                              : "__iops_io_trace_running");
    pd_str_append(
        out,
        "; do\n"
        "        [ ! -e \"$__iops_dir/$__iops_s.$__iops_attempt\" ] || __iops_left=1\n"
        "    done\n"
        "    [ -z \"$__iops_left\" ] ||\n"
        "        \"$__iops_probe\" stop --dir \"$__iops_dir\" --attempt \"$__iops_attempt\"");
    pd_str_append(out, kinds.data ? kinds.data : "");
    if (cfg->io)
        pd_str_append(out, " --io");
    pd_str_append(
        out,
        " $__iops_pids </dev/null >/dev/null 2>&1 || true\n"
        "    return \"$__iops_rc\"\n"
        "}\n"
        "trap '__iops_exit_handler' EXIT\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 129' HUP\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 130' INT\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 143' TERM\n"
        "# start: writes __iops_node_launcher.sh and the sampler wrappers, creates the\n"
        "# sentinels, forks this node's samplers, launches the other nodes' ones\n"
        "if [ -x \"$__iops_probe\" ]; then\n"
        "    __iops_started=1\n"
        "    __iops_pids=$(\"$__iops_probe\" start --dir \"$__iops_dir\" --attempt \"$__iops_attempt\" --interval ");
    pd_str_append(out, interval);
    pd_str_append(out, " --watch-pid $$");
    pd_str_append(out, kinds.data ? kinds.data : "");
    pd_str_free(&kinds);
    if (cfg->io)
        io_path_args(out, cfg);
    pd_str_append(out, " </dev/null) || true\n"
                       "fi\n");
    pd_str_append(out, "# <<< paddiser resource sampling <<<\n");
    if (out->oom) {
        snprintf(err, errlen, "out of memory building the probe block");
        return -1;
    }
    return 0;
}
