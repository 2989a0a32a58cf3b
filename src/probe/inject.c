/* The probe block of a generated run_<script>.sh (see inject.h). Plain POSIX
 * sh, safe under `set -eu`: every command that may fail is guarded, so the
 * benchmark never fails because of sampling, and its exit status is kept.
 *
 * At run time the block
 *   1. picks the attempt id (IOPS_ATTEMPT_ID, SLURM_JOB_ID, OAR_JOB_ID,
 *      PBS_JOBID, else $$), made file-name safe;
 *   2. writes the wrappers into the directory (atomically, so concurrent
 *      attempts and remote nodes never read half a file);
 *   3. registers __iops_exit_handler on EXIT (and INT/TERM/HUP), creates
 *      one sentinel per enabled sampler and starts each wrapper on every node
 *      through __iops_node_launcher.sh;
 *   4. at exit removes the sentinels, waits up to ~2 s for the samplers to
 *      write their closing sample, then stops any left. */
#include "probe/inject.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    "# usage: __iops_node_launcher.sh WRAPPER ATTEMPT [WATCH_PID]\n"
    "# Prints the PIDs of the local processes it started (this node's sampler and\n"
    "# the remote launch commands) for the exit handler. This node is always\n"
    "# sampled; remote launch failures are ignored. Node lists: SLURM (scontrol\n"
    "# show hostnames + srun --overlap), OAR ($OAR_NODEFILE + oarsh), PBS\n"
    "# ($PBS_NODEFILE + ssh -o BatchMode=yes).\n"
    "w=$1; a=$2; wp=${3:-}\n"
    "sh \"$w\" \"$a\" \"$wp\" </dev/null >&2 &\n"
    "echo $!\n"
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

/* One sampler wrapper: ATTEMPT [WATCH_PID] -> paddiser-probe KIND in the
 * foreground (exec, so the launcher's PID is the probe's). */
static void wrapper(pd_str *out, const pd_probe_inject_cfg *cfg, const char *file, const char *kind,
                    const char *what, char interval[32])
{
    pd_str_printf(out, "__iops_write \"$__iops_dir/%s\" <<'__IOPS_EOF' || true\n", file);
    pd_str_printf(out,
                  "#!/bin/sh\n"
                  "# paddiser: %s sampler for one node (started by __iops_node_launcher.sh).\n"
                  "# usage: %s ATTEMPT [WATCH_PID]\n"
                  "# Runs paddiser-probe at nice 19 until __iops_%strace_running.ATTEMPT goes.\n",
                  what, file, strcmp(kind, "cpu") == 0 ? "" : strcmp(kind, "gpu") == 0 ? "gpu_" : "io_");
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
        for (size_t i = 0; i < cfg->n_io_paths; i++) {
            /* Remote shells start elsewhere: a relative path is taken relative to dir. */
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
    pd_str_append(out, " ${2:+--watch-pid \"$2\"} </dev/null\n__IOPS_EOF\n");
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

    pd_str_append(out, "# >>> paddiser resource sampling (generated; never fails the benchmark) >>>\n"
                       "__iops_dir=");
    sh_quote(out, cfg->dir);
    pd_str_append(
        out,
        "\n"
        "__iops_attempt=${IOPS_ATTEMPT_ID:-${SLURM_JOB_ID:-${OAR_JOB_ID:-${PBS_JOBID:-$$}}}}\n"
        "__iops_attempt=$(printf '%s' \"$__iops_attempt\" | tr -c 'A-Za-z0-9._+@:=-' '_' | cut -c1-128) 2>/dev/null || true\n"
        "[ -n \"$__iops_attempt\" ] || __iops_attempt=$$\n"
        "__iops_pids=\n"
        "__iops_sentinels=\n"
        "# a new, unpredictable temporary name (not $1.$$.tmp: a link planted there\n"
        "# was written through); mv replaces a link at $1 instead of following it\n"
        "__iops_write() {\n"
        "    __iops_t=$(mktemp \"$1.XXXXXX\" 2>/dev/null) || return 0\n"
        "    cat 2>/dev/null >\"$__iops_t\" && chmod 755 \"$__iops_t\" 2>/dev/null &&\n"
        "        mv -f \"$__iops_t\" \"$1\" 2>/dev/null || { rm -f \"$__iops_t\" 2>/dev/null; return 0; }\n"
        "}\n"
        "__iops_write \"$__iops_dir/__iops_node_launcher.sh\" <<'__IOPS_EOF' || true\n");
    pd_str_append(out, LAUNCHER);
    pd_str_append(out, "__IOPS_EOF\n");
    if (cfg->cpu)
        wrapper(out, cfg, "__iops_runtime_sampler.sh", "cpu", "CPU/memory", interval);
    if (cfg->gpu)
        wrapper(out, cfg, "__iops_runtime_gpu_sampler.sh", "gpu", "GPU", interval);
    if (cfg->io)
        wrapper(out, cfg, "__iops_runtime_io_sampler.sh", "io", "I/O", interval);
    pd_str_append(
        out,
        "__iops_running() {  # a zombie waiting for its reaper counts as gone\n"
        "    kill -0 \"$1\" 2>/dev/null || return 1\n"
        "    __iops_st=\n"
        "    read -r __iops_st 2>/dev/null <\"/proc/$1/stat\" || return 0\n"
        "    case $__iops_st in *\") Z \"*|*\") X \"*) return 1;; esac\n"
        "    return 0\n"
        "}\n"
        "__iops_exit_handler() {\n"
        "    __iops_rc=$?\n"
        "    [ -z \"${__iops_exit_done:-}\" ] || return 0\n"
        "    __iops_exit_done=1\n"
        "    for __iops_s in $__iops_sentinels; do rm -f \"$__iops_dir/$__iops_s\" 2>/dev/null || true; done\n"
        "    __iops_i=0\n"
        "    while [ \"$__iops_i\" -lt 40 ]; do\n"
        "        __iops_alive=\n"
        "        for __iops_p in $__iops_pids; do\n"
        "            if __iops_running \"$__iops_p\"; then __iops_alive=1; fi\n"
        "        done\n"
        "        [ -n \"$__iops_alive\" ] || break\n"
        "        sleep 0.05 2>/dev/null || sleep 1 || true\n"
        "        __iops_i=$((__iops_i + 1))\n"
        "    done\n"
        "    for __iops_p in $__iops_pids; do\n"
        "        if __iops_running \"$__iops_p\"; then kill \"$__iops_p\" 2>/dev/null || true; fi\n"
        "    done\n"
        "    return \"$__iops_rc\"\n"
        "}\n"
        "trap '__iops_exit_handler' EXIT\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 129' HUP\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 130' INT\n"
        "trap '__iops_exit_handler || true; trap - EXIT; exit 143' TERM\n"
        "__iops_start() {\n"
        "    __iops_s=\"$__iops_dir/$2.$__iops_attempt\"\n"
        "    # created where new (noclobber: O_EXCL), never through a planted link\n"
        "    [ ! -L \"$__iops_s\" ] || return 0\n"
        "    [ -f \"$__iops_s\" ] || (set -C; true 2>/dev/null >\"$__iops_s\") 2>/dev/null || return 0  # not ':': see above\n"
        "    __iops_sentinels=\"$__iops_sentinels $2.$__iops_attempt\"\n"
        "    __iops_p=$(sh \"$__iops_dir/__iops_node_launcher.sh\" \"$__iops_dir/$1\" \"$__iops_attempt\" $$) "
        "|| true\n"
        "    __iops_pids=\"$__iops_pids $__iops_p\"\n"
        "    return 0\n"
        "}\n");
    if (cfg->cpu)
        pd_str_append(out, "__iops_start __iops_runtime_sampler.sh __iops_trace_running || true\n");
    if (cfg->gpu)
        pd_str_append(out, "__iops_start __iops_runtime_gpu_sampler.sh __iops_gpu_trace_running || true\n");
    if (cfg->io)
        pd_str_append(out, "__iops_start __iops_runtime_io_sampler.sh __iops_io_trace_running || true\n");
    pd_str_append(out, "# <<< paddiser resource sampling <<<\n");
    if (out->oom) {
        snprintf(err, errlen, "out of memory building the probe block");
        return -1;
    }
    return 0;
}
