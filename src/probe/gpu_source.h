/* Where the GPU sampler reads its GPUs from, in this order of preference:
 * NVML (libnvidia-ml.so.1 through dlopen: no fork per sample), nvidia-smi,
 * amd-smi, rocm-smi, xpu-smi. Every source writes the same trace columns
 * (PD_GPU_HEADER); a field a vendor's tool does not print is left empty, never
 * invented. The *_format functions are pure (tool text in, rows out) so the
 * unit tests feed them recorded output; pd_gpu_source_* run the tools.
 * Sources: docs/probe.md, "GPU sources". */
#ifndef PD_PROBE_GPU_SOURCE_H
#define PD_PROBE_GPU_SOURCE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

typedef enum {
    PD_GPU_NONE = 0,
    PD_GPU_NVML,
    PD_GPU_NVIDIA_SMI,
    PD_GPU_AMD_SMI,
    PD_GPU_ROCM_SMI,
    PD_GPU_XPU_SMI,
} pd_gpu_kind;

/* Per-GPU facts the sampling command does not print (amd-smi metric and
 * xpu-smi dump carry no name; xpu-smi dump no memory size), read once. */
#define PD_GPU_MAX_NAMED 64
typedef struct {
    bool known[PD_GPU_MAX_NAMED];
    char name[PD_GPU_MAX_NAMED][128];
    char mem_total_mib[PD_GPU_MAX_NAMED][32];
} pd_gpu_names;

/* Runs argv[0] found at path; returns its stdout (valid until the next call)
 * or NULL when it could not run, failed or hung. Supplied by the caller so
 * that the sampler loop keeps one spawn routine (with its stop handling). */
typedef const char *(*pd_gpu_run_fn)(void *ctx, const char *path, char *const argv[]);

struct pd_gpu_nvml;
typedef struct {
    pd_gpu_kind kind;
    char tool[PATH_MAX]; /* the *-smi binary, from PATH */
    struct pd_gpu_nvml *nvml;
    pd_gpu_names names;
} pd_gpu_source;

/* Picks the first source that works on this node and lists at least one GPU
 * (NVML: initialises and counts; a tool: found on PATH and its first query
 * succeeds with a row). PADDISER_GPU_SOURCE=nvml|nvidia-smi|amd-smi|rocm-smi|
 * xpu-smi tries only that one; PADDISER_NVML_LIB replaces the library name.
 * Returns false (kind none) when there is nothing to sample. */
bool pd_gpu_source_open(pd_gpu_source *src, pd_gpu_run_fn run, void *ctx);
/* One sample: appends rows to out; returns the row count, -1 on failure. */
int pd_gpu_source_sample(pd_gpu_source *src, pd_gpu_run_fn run, void *ctx, double ts, const char *host,
                         pd_str *out);
void pd_gpu_source_close(pd_gpu_source *src);
const char *pd_gpu_kind_name(pd_gpu_kind kind);
/* First executable prog in $PATH into out; false if none. */
bool pd_gpu_find_in_path(const char *prog, char *out, size_t len);

/* ---- pure formatting of recorded tool output ---- */

/* name as the tool printed it, prefixed with vendor when it does not
 * already say it (case-insensitive); "" gives "<vendor> GPU". */
void pd_gpu_vendor_name(char *out, size_t len, const char *vendor, const char *name);

/* `amd-smi metric --usage --power --clock --temperature --mem-usage --csv`:
 * columns found by header name (they differ between amd-smi versions). */
int pd_gpu_amd_smi_format(const char *csv, const pd_gpu_names *names, double ts, const char *host,
                          pd_str *out);
/* `amd-smi static --asic --csv` (gpu, market_name) into names. */
void pd_gpu_amd_smi_names(const char *csv, pd_gpu_names *names);
/* `rocm-smi --showproductname --showuse --showmemuse --showmeminfo vram
 * --showtemp --showpower --showclocks --csv`, by header name. */
int pd_gpu_rocm_smi_format(const char *csv, double ts, const char *host, pd_str *out);
/* `xpu-smi dump -d -1 -m 0,1,2,3,17,18 -n 1`: one row per DeviceId (the last
 * printed), by header name. */
int pd_gpu_xpu_smi_format(const char *dump, const pd_gpu_names *names, double ts, const char *host,
                          pd_str *out);
/* `xpu-smi discovery --dump 1,2,16` (Device ID, Device Name, Memory Physical
 * Size) into names. */
void pd_gpu_xpu_smi_names(const char *csv, pd_gpu_names *names);

/* ---- NVML ---- */

/* dlopen()s lib (NULL: PADDISER_NVML_LIB, else "libnvidia-ml.so.1"), resolves
 * the functions, initialises and counts. NULL when any step fails (the
 * library is then closed again). */
struct pd_gpu_nvml *pd_gpu_nvml_open(const char *lib);
/* One row per GPU, as nvidia-smi --format=csv,noheader,nounits would print
 * it ([N/A] for a value the driver does not give). */
int pd_gpu_nvml_sample(struct pd_gpu_nvml *n, double ts, const char *host, pd_str *out);
void pd_gpu_nvml_close(struct pd_gpu_nvml *n);

#endif
