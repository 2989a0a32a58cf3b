/* Baselines from memory-tiering systems, each simulated from the
 * information its mechanism sees (sampled accesses, never the exact
 * counts), replaying the profile's phases in order as the timeline of the
 * previous instance, starting from first touch. Each returns fast[npages]
 * in {0, 1} with at most cap_pages ones; 0, or -1 when out of memory.
 * Parameters (the systems' published defaults where named, else assumed):
 *   tpp     Linux TPP / NUMA-balancing tiering (Maruf et al., ASPLOS'23):
 *           hint-fault scan of the whole footprint every phase (in TPP's
 *           favour: the kernel scans 256 MB per period of at least 1 s, longer
 *           than these phases; an unmapped page faults on any access, so TPP
 *           sees recency, not frequency); a
 *           slow page faulting in two scans within 2 phases is promoted; the
 *           fast tier demotes its least recently seen pages to keep 2 % free
 *           (demotion watermark, assumed).
 *   hemem   HeMem (Raybuck et al., SOSP'21): sampled accesses (1 per
 *           `period`, assumed so that the run yields about 16 samples per
 *           page), 2 MiB units, hot at 8 sampled reads or 4 writes, all
 *           counters halved when one reaches 18 (cooling); hot units, hottest
 *           first, go to fast memory whole.
 *   memtis  MEMTIS (Lee et al., SOSP'23): sampled accesses, log2 histogram
 *           of 2 MiB units, hot threshold = the lowest bin whose units still
 *           fit the capacity, counters halved every 4 phases (assumed); a
 *           unit whose hottest eighth of subpages holds 80 % of its samples
 *           (assumed) is split and placed at 4 KiB.
 *   damon   DAMON/DAMOS (Linux mm/damon): 10..1000 adaptive regions, 20
 *           samples per aggregation interval (a phase; 5 ms / 100 ms
 *           defaults), one random page's accessed bit per region per sample,
 *           adjacent regions merged when their nr_accesses differ by at most
 *           10 % of the maximum, regions split in two at random when fewer
 *           than half the maximum; hottest regions to fast memory.
 *   colloid Colloid (Vuppalapati and Agarwal, SOSP'24): the hottest pages
 *           (accessed-bit sampling, as hot-first) go to fast memory only while
 *           the fast tier's loaded latency stays at or below the slow tier's,
 *           by the planners' machine model (exec_model); capacity it declines
 *           to use is reported in held_back. */
#ifndef PD_SIM_TIERING_H
#define PD_SIM_TIERING_H

#include <stddef.h>
#include <stdint.h>

#include "sim/profile.h"
#include "sim/tier.h"

typedef struct {
    uint64_t seed;
} pd_sim_baseline_opts;

int pd_sim_tpp(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast);
int pd_sim_hemem(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast);
int pd_sim_memtis(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast);
int pd_sim_damon(const pd_sim_profile *p, size_t cap_pages, const pd_sim_baseline_opts *o, double *fast);
int pd_sim_colloid(const pd_sim_profile *p, const pd_sim_machine *m, size_t cap_pages,
                   const pd_sim_baseline_opts *o, double *fast, size_t *held_back);

/* acc[ph * npages + g]: page g's estimated accesses in phase ph (the
 * phase's region counts spread by the tasks' whole-run page counts).
 * Exported for the tests. NULL when out of memory or without phases. */
double *pd_sim_phase_page_accesses(const pd_sim_profile *p);

#endif
