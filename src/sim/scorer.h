/* The evaluator that scores placements: independent of the model the
 * planners plan with (exec_model.h), so that no policy is scored by its
 * own model. It differs from the planners' model where published device
 * measurements say real tiers behave differently:
 *   - per phase: a barrier-delimited phase ends with its slowest task, and
 *     the makespan is the sum over phases (exec_model collapses barriers);
 *   - contention by queueing: a tier's latency rises with its utilisation
 *     U as lat0 * (1 + kappa U / (1 - U)) (the planners' model only
 *     stretches once bandwidth is exhausted);
 *   - compute/memory overlap: T = C + M - omega min(C, M);
 *   - media granularity: a random 64 B access moves `media_bytes` inside
 *     the device (Optane: 256 B), so it costs that much bandwidth;
 *   - read/write asymmetry, and write bandwidth that falls beyond a few
 *     concurrent writers (Optane);
 *   - memory mode pays its fills (a DRAM write per miss) and the write-back
 *     of dirty lines it evicts (a slow write per write miss);
 *   - migration: pages moved at the sync point before the instance cost
 *     bytes / migrate_gbs, added to that instance's makespan.
 * Compute time per phase and task is calibrated with this model's own
 * uncontended all-DRAM memory time against the measured phase time. */
#ifndef PD_SIM_SCORER_H
#define PD_SIM_SCORER_H

#include <stddef.h>

#include "sim/profile.h"

typedef struct {
    double lat_seq_ns, lat_rand_ns; /* idle load latency */
    double bw_read_gbs, bw_write_gbs; /* peak of the whole simulated machine */
    double media_bytes;             /* internal access granularity */
    double write_peak_writers;      /* concurrent writers at which write BW peaks; 0 = no fall */
    double write_fall;              /* write BW *= (peak / writers)^write_fall beyond the peak */
} pd_score_tier;

typedef enum { PD_SCORE_QUEUE = 0, PD_SCORE_SATURATE } pd_score_contention;

typedef struct {
    char name[32];
    pd_score_tier tier[2];          /* PD_SIM_FAST, PD_SIM_SLOW */
    double migrate_gbs;             /* 4 KiB page-migration throughput (pd_score_migrate_gbs) */
    pd_score_contention contention;
    double kappa;                   /* queueing weight of the loaded-latency curve */
    double overlap;                 /* omega in [0, 1] */
} pd_score_machine;

/* Presets: the names of pd_sim_machine_preset plus "cxl-slow". 0 or -1. */
int pd_score_machine_preset(const char *name, pd_score_machine *out);

/* A preset's migration throughput in GB/s: the cited 4 KiB move_pages rate
 * (3.31 GB/s, see scorer.c and docs/sim.md) capped by the slow tier's write
 * bandwidth. */
double pd_score_migrate_gbs(const pd_score_tier *slow);

/* Sensitivity variants of a machine: index 0 is the machine itself. */
#define PD_SCORE_NVARIANTS 11
const char *pd_score_variant_name(int k);
void pd_score_variant(const pd_score_machine *base, int k, pd_score_machine *out);

typedef struct {
    double makespan;   /* sum over phases of the slowest task, plus migration */
    double migrate_s;  /* of which migration */
    double cov;        /* of the tasks' busy times summed over phases */
    double *task_time; /* [ntasks] busy time summed over phases (caller's, may be NULL) */
} pd_score_result;

/* Scores placement fast[npages] (fraction of each page's accesses fast
 * memory serves; memory mode: the hit rate, with mm != 0) on machine m.
 * moved_pages: pages migrated before the instance. p needs phases
 * (pd_sim_profile_single_phase). 0, or -1 when out of memory. */
int pd_score(const pd_score_machine *m, const pd_sim_profile *p, const double *fast, int mm,
             size_t moved_pages, pd_score_result *out);

/* How many times longer p's instance is on m, all in fast memory, than it
 * was measured (the sum over phases of the slowest task's time_s). The
 * runtime weighs a plan's gain, in its own measured time, against the
 * moves' cost; the scorer charges the moves in its model's time, so the
 * study tells the runtime the scorer's migration throughput times this
 * (docs/sim.md, "Migration"). 1 when either time is unknown or out of
 * memory. */
double pd_score_time_ratio(const pd_score_machine *m, const pd_sim_profile *p);

/* What the study tells the runtime its moves cost on p, in bytes per second
 * of the runtime's own time (PADDISER_MIGRATE_BW): the scorer's migration
 * throughput times pd_score_time_ratio. `sim runtime` tells it the same,
 * so that the runtime decides there as in the study. */
double pd_score_runtime_migrate_bw(const pd_score_machine *m, const pd_sim_profile *p);

/* Sets PADDISER_MIGRATE_BW to pd_score_runtime_migrate_bw(m, p) for the
 * runtime runs that follow (the caller unsets it after them). */
void pd_score_tell_runtime_migrate_bw(const pd_score_machine *m, const pd_sim_profile *p);

/* Pages whose tier differs between two placements (0/1 per page). */
size_t pd_score_moved_pages(const double *from, const double *to, size_t npages);

#endif
