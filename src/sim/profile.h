/* Access profile of one workload run on one input: for every task and every
 * page of every managed object, the memory accesses (64 B cache-line
 * transfers) it reads and writes, plus each task's measured time on this
 * machine. A "page" is the profile's unit, page_bytes: 4 KiB as measured,
 * or a coarser power of two (2 MiB) for a compressed profile
 * (pd_sim_profile_coarsen), whose memory then scales with the footprint
 * over 2 MiB instead of over 4 KiB: every consumer places, counts and
 * migrates whole units. File format (JSON, documented in docs/sim.md):
 *   {"format": "paddiser-sim-profile", "version": 2 or 3, "workload": str,
 *    "input": str, "page_size": 4096 (version 1, 2) or the unit (version 3),
 *    "objects": [{"name", "bytes", "pattern", "elem_size"}],
 *    "tasks": [{"id", "time_s", "compute_s",
 *               "pages": [[object, page, reads, writes], ...]}],
 *    "phases": [[{"time_s", "regions": [[region, reads, writes], ...]}, ...one per task], ...]}
 * Only pages and regions a task touched are listed. Version 2 added
 * "phases"; version-1 files load as one phase. */
#ifndef PD_SIM_PROFILE_H
#define PD_SIM_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "paddiser.h"

#define PD_SIM_PAGE 4096
#define PD_SIM_LINE 64
#define PD_SIM_MAX_PAGES (1 << 28) /* loader sanity bound: 1 TiB of 4 KiB pages */
#define PD_SIM_MAX_UNIT (1UL << 30) /* the coarsest unit a profile may have */

typedef struct {
    char *name;
    size_t bytes;
    size_t npages;     /* ceil(bytes / page) */
    size_t page_base;  /* index of the object's first page in the global page array */
    pd_pattern pattern;
    size_t elem_size;
} pd_sim_object;

typedef struct {
    double time_s;     /* measured on this machine (thread CPU time, min of runs) */
    double compute_s;  /* time the execution model charges besides memory */
    uint64_t *reads;   /* [npages] line reads per global page */
    uint64_t *writes;  /* [npages] */
} pd_sim_task;

/* Barrier-delimited phases: every task runs once per phase and the next
 * phase starts when all have finished, so a phase's time is its slowest
 * task's. Counts are kept per region (an object is cut into at most
 * PD_SIM_REGIONS_PER_OBJECT regions of equal page count), which keeps a
 * profile of many phases small; within a region the task's whole-run page
 * counts say which pages the phase's accesses went to. */
#define PD_SIM_REGIONS_PER_OBJECT 64

typedef struct {
    double time_s;     /* measured on this machine (thread CPU time, min of runs) */
    uint64_t *reads;   /* [nregions] line reads */
    uint64_t *writes;  /* [nregions] */
} pd_sim_phase_task;

typedef struct {
    char *workload;
    char *input;
    int nobjects;
    pd_sim_object *objects;
    size_t page_bytes; /* the unit: PD_SIM_PAGE, or a power-of-two multiple of it */
    size_t npages;     /* all objects' pages (units) */
    int ntasks;
    pd_sim_task *tasks;
    /* regions (made by pd_sim_profile_alloc_counts) */
    size_t nregions;
    size_t *region_page;  /* [nregions + 1] first global page of each region */
    int *region_object;   /* [nregions] */
    size_t *page_region;  /* [npages] */
    /* phases: [nphases][ntasks], phase-major (PD_SIM_PHASE) */
    int nphases;
    pd_sim_phase_task *phases;
} pd_sim_profile;

#define PD_SIM_PHASE(p, ph, t) (&(p)->phases[(size_t)(ph) * (size_t)(p)->ntasks + (size_t)(t)])

/* Empty profile with ntasks tasks and no objects, 4 KiB pages. NULL on OOM. */
pd_sim_profile *pd_sim_profile_new(const char *workload, const char *input, int ntasks);
/* Sets the unit before any object is added: a power of two, a multiple of
 * PD_SIM_PAGE, at most PD_SIM_MAX_UNIT. 0, or -1 when not allowed. */
int pd_sim_profile_set_unit(pd_sim_profile *p, size_t page_bytes);
/* The compressed copy of p at unit page_bytes (a multiple of p's): each
 * task's counts summed per unit; each phase's region counts spread over
 * the pages of their region as the task's whole-run counts there (the
 * scorer's own reading of a region), summed per unit and region of the
 * copy (rounded to whole lines). Times, objects and phases as p's. NULL
 * with err on a bad unit or out of memory. */
pd_sim_profile *pd_sim_profile_coarsen(const pd_sim_profile *p, size_t page_bytes, char *err,
                                       size_t errlen);
/* Bytes the profile holds in memory (its arrays and strings), for the
 * memory accounting of docs/sim.md. */
size_t pd_sim_profile_bytes(const pd_sim_profile *p);
/* Appends an object; returns its id or -1 (OOM/bad args). Must come before
 * pd_sim_profile_alloc_counts. */
int pd_sim_profile_add_object(pd_sim_profile *p, const char *name, size_t bytes,
                              pd_pattern pattern, size_t elem_size);
/* Allocates the zeroed per-task page counters and cuts the objects into
 * regions. 0 or -1 (OOM). */
int pd_sim_profile_alloc_counts(pd_sim_profile *p);
/* Appends a phase with zeroed counts and times; returns its first task
 * entry (PD_SIM_PHASE(p, p->nphases - 1, 0)) or NULL when out of memory. */
pd_sim_phase_task *pd_sim_profile_add_phase(pd_sim_profile *p);
/* A profile without phases (built by hand, an estimate, a version-1 file)
 * gets one phase holding the whole run: the tasks' totals and times.
 * No-op when it has phases. 0 or -1 (OOM). */
int pd_sim_profile_single_phase(pd_sim_profile *p);
void pd_sim_profile_free(pd_sim_profile *p);

/* Total line accesses (reads + writes) of a task / of everything per page. */
double pd_sim_task_accesses(const pd_sim_profile *p, int task);
/* page_tot[npages] = sum over tasks of reads + writes. */
void pd_sim_page_totals(const pd_sim_profile *p, double *page_tot);
size_t pd_sim_footprint(const pd_sim_profile *p); /* npages * page_bytes */

/* The accesses of `shape` (same workload and objects, another input) as the
 * runtime would estimate them from `base` (Eq. 1, alpha 1: the counts are
 * memory-level already): every object's per-page counts stretched over its
 * new page count, scaled by size_new / size_base; compute time scaled by the
 * task's estimated / base accesses. NULL + err when the objects differ. */
pd_sim_profile *pd_sim_profile_predict(const pd_sim_profile *base, const pd_sim_profile *shape,
                                       char *err, size_t errlen);

int pd_sim_profile_save(const pd_sim_profile *p, const char *path, char *err, size_t errlen);
pd_sim_profile *pd_sim_profile_load(const char *path, char *err, size_t errlen);

const char *pd_sim_pattern_name(pd_pattern pat);
/* -1 when unknown name. */
int pd_sim_pattern_parse(const char *name, pd_pattern *out);

#endif
