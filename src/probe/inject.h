/* The probe injection block that `paddiser bench` writes into every generated
 * run_<script>.sh right after the shebang and #SBATCH lines (issue #2 owns the
 * implementation, issue #3 calls it). The block registers the exit handler
 * and runs `paddiser-probe start`, which writes the wrapper scripts
 * (__iops_runtime_sampler.sh, __iops_runtime_gpu_sampler.sh,
 * __iops_runtime_io_sampler.sh, __iops_node_launcher.sh) into the execution
 * directory and starts the enabled samplers on every node; at exit
 * `paddiser-probe stop` removes the sentinels and waits for the closing
 * samples. It never makes the benchmark fail. */
#ifndef PD_PROBE_INJECT_H
#define PD_PROBE_INJECT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

typedef struct {
    bool cpu;                 /* probes.resource_sampling */
    bool gpu;                 /* probes.gpu_sampling */
    bool io;                  /* probes.io_sampling */
    double interval_s;        /* probes.sampling_interval (default 1.0) */
    const char *probe_bin;    /* absolute path of paddiser-probe */
    const char *dir;          /* directory the traces go to (the repetition dir) */
    const char *const *io_paths; /* rendered io_paths, n_io_paths of them */
    size_t n_io_paths;
} pd_probe_inject_cfg;

/* Appends the shell block to out. Returns 0, or -1 with a message in err for
 * an invalid configuration (e.g. io without paths). */
int pd_probe_injection(pd_str *out, const pd_probe_inject_cfg *cfg, char *err, size_t errlen);

/* The node launcher script __iops_node_launcher.sh. */
void pd_probe_launcher_text(pd_str *out);
/* The wrapper file name of a sampler kind ("cpu", "gpu", "io"). */
const char *pd_probe_wrapper_name(const char *kind);
/* The wrapper script of a sampler kind, running cfg->probe_bin. */
void pd_probe_wrapper_text(pd_str *out, const pd_probe_inject_cfg *cfg, const char *kind);

#endif
