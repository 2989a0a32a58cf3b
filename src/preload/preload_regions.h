/* OpenMP parallel regions as runtime tasks (issue #14, `paddiser run`):
 * what the libgomp hooks (preload_gomp.c) and the OMPT tool
 * (preload_ompt.c) report, and what preload_regions.c makes of it.
 *
 * A region is told apart by a code address: the outlined function under
 * libgomp, the construct's return address (codeptr_ra) under OMPT. Thread t
 * of region r is task r * PDP_REGION_THREADS + t. Only outermost regions
 * (level 1) are tasks; one of them is open at a time. */
#ifndef PD_PRELOAD_REGIONS_H
#define PD_PRELOAD_REGIONS_H

/* Threads per region that get a task of their own (the task id bound). */
#define PDP_REGION_THREADS 64

/* One tracked region instance, as the encountering thread hands it to the
 * team's threads. */
typedef struct {
    int region;    /* region index, >= 0 */
    unsigned inst; /* instance number, > 0 */
    int retrial;   /* an untracked region's instance tracked to see whether it grew */
} pdp_team;

/* Encountering thread, before the team starts: 1 and *team filled when the
 * region is tracked; 0 (pass it through untouched) when the runtime is not
 * running, the region is nested, another outermost region is open (regions
 * begun from several application threads at once), or the region table is
 * full. */
int pdp_team_open(const void *code, pdp_team *team);

/* Encountering thread, after the team joined (only after a 1 from
 * pdp_team_open): the instance closes and every sync_every regions the
 * sync point runs. */
void pdp_team_close(const pdp_team *team);

/* A thread starts the region's body as member thread_num (team NULL: an
 * untracked or nested team, only counted for nesting). */
void pdp_member_begin(const pdp_team *team, unsigned thread_num);
/* It arrived at the region's implicit barrier: its task ends. */
void pdp_member_end(void);

/* A barrier of the tracked team: the thread's task pauses (the wait is
 * timed and left out of its time, with no runtime call). Barriers of
 * nested teams are part of the outer task. */
void pdp_barrier_enter(void);
void pdp_barrier_leave(void);
/* A barrier that may be the region's own join barrier (OMPT kinds that
 * say so, or do not tell): the task ends before the wait and begins again
 * after it while its instance is still open. */
void pdp_join_barrier_enter(void);
void pdp_join_barrier_leave(void);

/* Set by a libgomp-ABI hook on the encountering thread while it passes a
 * region through to LLVM libomp's GOMP_* entry point: the outlined
 * function. The OMPT tool's parallel_begin takes it (and clears it) as the
 * region's code address, since the return address OMPT reports there is
 * the hook's own. */
extern __thread const void *pdp_gomp_fn __attribute__((tls_model("initial-exec")));

#endif
