/* The three samplers of paddiser-probe as pure "one sample from these texts"
 * functions: the binary feeds them what it read from /proc (or nvidia-smi),
 * the unit tests feed them fixture snapshots. Each call appends CSV rows (no
 * header) to out; the first call of a sampler only records the baseline.
 * Nothing here allocates per sample once the state has grown to the machine
 * (cores, targets). Formats: shared/spec/resource-sampling.txt. */
#ifndef PD_PROBE_SAMPLE_H
#define PD_PROBE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

#define PD_CPU_HEADER "timestamp,hostname,core,cpu_user_pct,cpu_system_pct,cpu_idle_pct,mem_total_kb,mem_available_kb\n"
#define PD_GPU_HEADER                                                                              \
    "timestamp,hostname,gpu_index,gpu_name,utilization_gpu_pct,utilization_mem_pct,"              \
    "memory_used_mib,memory_total_mib,temperature_c,power_draw_w,clock_sm_mhz,clock_mem_mhz\n"
#define PD_IO_HEADER "timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,read_ops,write_ops\n"

#define PD_NVIDIA_SMI_QUERY                                                                        \
    "--query-gpu=index,name,utilization.gpu,utilization.memory,memory.used,memory.total,"          \
    "temperature.gpu,power.draw,clocks.current.sm,clocks.current.memory"

/* ---- CPU / memory ---- */

/* The 7 counters of a cpuN line that make up d: user nice system idle iowait irq softirq. */
typedef struct {
    unsigned long long v[7];
    bool valid;
    bool seen; /* listed in the current sample */
} pd_cpu_core;

typedef struct {
    pd_cpu_core *cores; /* indexed by core number */
    size_t ncores;
} pd_cpu_state;

/* stat and meminfo are the texts of /proc/stat and /proc/meminfo. Appends one
 * row per cpuN line that has a baseline. A core missing from stat (offline)
 * loses its baseline, so it restarts with one when it comes back. Returns the
 * number of rows, or -1 with err filled when a text is unusable (no cpuN line,
 * no MemTotal). */
int pd_cpu_sample(pd_cpu_state *st, const char *stat, const char *meminfo, double ts, const char *host,
                  pd_str *out, char *err, size_t errlen);
void pd_cpu_state_free(pd_cpu_state *st);

/* ---- GPU ---- */

/* smi_out is nvidia-smi's output for PD_NVIDIA_SMI_QUERY with
 * --format=csv,noheader,nounits. Fields are split on ", " and passed through
 * as printed ([N/A] included); a name holding ", " is rejoined, and gets
 * "NVIDIA " in front when it lacks it. Lines with fewer than 10 fields are
 * skipped. Returns the number of rows. The other GPU sources:
 * probe/gpu_source.h. */
int pd_gpu_format(const char *smi_out, double ts, const char *host, pd_str *out);

/* ---- I/O ---- */

typedef enum { PD_IO_NONE = 0, PD_IO_BLOCK, PD_IO_NFS, PD_IO_LUSTRE, PD_IO_GPFS } pd_io_kind;

/* "none", "block", "nfs", "lustre", "gpfs": the CSV source and JSON kind. */
const char *pd_io_kind_name(pd_io_kind kind);

/* What one configured io_path resolved to (one entry of the targets JSON). */
typedef struct {
    char *path;   /* as configured */
    pd_io_kind kind;
    char *target; /* whole disks joined by ';', NFS mount source, llite instance, GPFS file system, or "" */
    char *mount;
    char *fstype;
    char *reason; /* why kind is none ("" otherwise) */
} pd_io_path_result;

/* One deduplicated counter. */
typedef struct {
    pd_io_kind kind;
    char *device;  /* disk name (diskstats), NFS mount source (unescaped), llite
                      instance (<fsname>-<id>) or GPFS file system name */
    char *match;   /* the name as diskstats / mountstats / mmpmon print it; for
                      Lustre the path of the instance's stats file */
    char *paths;   /* configured paths resolving to it, joined by ';' */
    unsigned long long prev[4]; /* read_bytes write_bytes read_ops write_ops */
    bool valid;
    unsigned long long cur[4];
    bool seen;     /* found in the current sample */
} pd_io_target;

typedef struct {
    pd_io_path_result *paths;
    size_t npaths;
    pd_io_target *targets;
    size_t ntargets;
} pd_io_set;

/* Resolves the paths on this node (mountinfo from PADDISER_PROC_ROOT, block
 * devices from PADDISER_SYS_ROOT and PADDISER_DEV_ROOT). Never fails for a
 * path: what cannot be counted becomes kind none with a reason. Returns 0, or
 * -1 on allocation failure / unreadable mountinfo (err filled). */
int pd_io_resolve(pd_io_set *set, const char *const *paths, size_t npaths, char *err, size_t errlen);
/* Writes one warning line per kind-none path to stderr. */
void pd_io_warn(const pd_io_set *set, const char *prog);
/* The targets JSON document (caller frees), NULL on allocation failure. */
char *pd_io_targets_json(const pd_io_set *set, const char *host);
void pd_io_set_free(pd_io_set *set);

/* diskstats / mountstats are the texts of /proc/diskstats and
 * /proc/self/mountstats (either may be NULL when unreadable). interval_s is the
 * measured time since the previous sample. Appends one row per target with a
 * baseline; returns the number of rows. */
int pd_io_sample(pd_io_set *set, const char *diskstats, const char *mountstats, double ts, double interval_s,
                 const char *host, pd_str *out);

/* pd_io_sample in steps, for the sources that are not one /proc text: begin
 * forgets what the previous sample saw, each scan marks the targets it found
 * (cur filled, seen set), emit appends the rows of the seen targets (kind
 * order of the targets, deltas against the previous sample) and returns their
 * number. A target no scan saw loses its baseline, as in pd_io_sample. */
void pd_io_begin(pd_io_set *set);
void pd_io_scan_diskstats(pd_io_set *set, const char *diskstats);
void pd_io_scan_mountstats(pd_io_set *set, const char *mountstats);
int pd_io_emit(pd_io_set *set, double ts, double interval_s, const char *host, pd_str *out);

/* Lustre (io_lustre.c): stats is the text of one llite instance's stats file
 * (t->match). read_bytes/write_bytes lines give bytes (their sum) and ops
 * (their samples); a line Lustre leaves out (no sample yet) counts 0. False,
 * t unchanged, when the text is no llite stats file (no snapshot_time). */
bool pd_lustre_scan(pd_io_target *t, const char *stats);

/* GPFS (io_gpfs.c): out is `mmpmon -p` output holding fs_io_s answers; each
 * _fs_io_s_ line with _rc_ 0 fills the GPFS target whose file system is its
 * _fs_: _br_ _bw_ bytes, _rdc_ _wc_ ops. */
void pd_gpfs_scan(pd_io_set *set, const char *out);

#endif
