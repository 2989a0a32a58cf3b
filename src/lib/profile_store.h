/* Growth curves kept across runs (PADDISER_PROFILE_STORE=FILE).
 *
 * A task's time grows with its input in a way Eq. 1's sizes cannot tell
 * (caches, TLB reach): until the task has run two inputs in this run, the
 * first instance of a new one is scaled by its size alone, and on the
 * phases bench the switch from 128 to 256 MiB came out 38 - 46% low. The
 * paper profiles an application once and reuses that on later inputs;
 * the store does the same for the growth: at pd_finalize each task's
 * inputs (their bytes, and the median DRAM-only time of their last
 * instances) go into FILE, and in a later run a task that has run only one
 * input grows its time to a new one as the stored curve grows between the
 * two sizes, anchored on this run's own time (predict.c,
 * new_input_dram_time): the machine's speed on the day comes from the run,
 * only the shape from the store. The task's memory-bound fraction m, where
 * a run learned it, is kept too and is the next run's prior for it (in
 * place of 0.5 +- 0.25): a later run plans with what the last one learned
 * instead of moving pages on the prior's guess first. And each task's heat
 * (heat.c) by input: where an earlier run heated the input this run
 * samples first, that instance's counts are smoothed with the stored heat,
 * as with earlier instances of the same input in one run (and with
 * PADDISER_PROFILE_STORE_THIN=on the instance is sampled thinly, tasks.c);
 * an input this run has not sampled is planned from its stored heat
 * (heat.c, rt_heat_select) rather than from another input's.
 * The input is known by rt_input_signature (the objects' registration order
 * and sizes), so a stored heat applies only to the same objects at the same
 * sizes.
 *
 * File: JSON, {"format": "paddiser-profile-store", "version": 1, "tasks":
 * [{"task": ID, "inputs": [{"bytes": B, "dram_s": T}, ...], "mem_bound": M,
 * "mem_bound_sd": S, "heat": [{"input": "16 hex digits", "n": N, "wall_s":
 * T, "acc": [per object], "hot": [[object, offset, length, count, touches,
 * accesses], ...]}, ...]}, ...], "visits": [LENGTH, ...]} (the last four
 * optional; "visits": the writing run's last visits' lengths in
 * instances, oldest first, at most RT_VISITS_KEPT; offsets and
 * lengths as fractions of the object's size, as rt_hot), written compact,
 * with at most 1 + RT_HEAT_INPUTS inputs a task and a task's 1024 hottest
 * regions of each. Processes may share
 * one: at pd_finalize each takes FILE.lock (flock), reads FILE again and
 * writes its own tasks over what is there (tasks are keyed by id: MPI
 * ranks keep theirs), whole, to a temporary file beside it renamed over
 * it. A file that is not a regular file
 * (a link included), or does not parse, is reported and left alone: not
 * read, not written. All under rt.lock. */
#ifndef PD_LIB_PROFILE_STORE_H
#define PD_LIB_PROFILE_STORE_H

#include "lib/runtime_internal.h"

typedef struct {
    int task;
    int n;
    double bytes[RT_INPUTS], dram_s[RT_INPUTS]; /* by bytes, increasing */
    double mem_bound, mem_bound_sd; /* m as a run learned it, and its sd (NaN: none) */
    void *heat; /* its heat by input, the JSON array as read (validated), or NULL */
} rt_store_task;

/* pd_init: reads $PADDISER_PROFILE_STORE (nothing when unset or absent). */
void rt_store_load(void);
/* pd_finalize: this run's tasks' inputs merged into the file as it is then
 * (an input of this run replaces a stored one within 2% of its bytes).
 * PD_OK, or PD_EIO / PD_ENOMEM with a notice. */
int rt_store_save(void);
/* The stored curve of task `task`, or NULL (none, or fewer than 2 inputs). */
const rt_store_task *rt_store_find(int task);
/* m of task `task` as an earlier run learned it, and its sd: 1, or 0
 * when none was stored. */
int rt_store_mem_bound(int task, double *m, double *sd);
/* The heat task `task` had on input `input` in an earlier run, as fresh
 * copies (free them): its regions (objects registered and in use now),
 * per-object totals (*nacc of them) and how many instances it averages. 1,
 * or 0 when none is stored or it names an object not registered now. */
int rt_store_heat(int task, uint64_t input, rt_hot **hot, size_t *nhot, double **acc, size_t *nacc, int *n);
/* 1 when an earlier run stored task `task`'s heat of input `input` (of the
 * objects registered and in use now). */
int rt_store_has_heat(int task, uint64_t input);
/* The lengths of an earlier run's last visits (instances of one input in
 * a row), at most max, oldest first, into len: how many (0: none stored).
 * The gain-versus-cost rule's horizon starts from them (migrate_cost.c). */
int rt_store_visits(int *len, int max);
/* The longest time an earlier run's tasks took on input `input` (their
 * stored heat's wall_s); 0 when none is stored. */
double rt_store_instance_s(uint64_t input);

#endif
