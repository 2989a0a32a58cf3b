/* Placement baselines of related memory-tiering systems, for the simulator.
 * Each sees only what its own mechanism samples (accessed bits, hint
 * faults, PEBS-like samples), never the exact counts; each replays the
 * profile's phases in order as the timeline of the previous instance,
 * starting from first touch (the first cap_pages pages in global page
 * order are in fast memory), and returns what it holds at the end:
 * fast[npages] in {0, 1} with at most cap_pages ones. Deterministic for a
 * seed. A profile without phases is one phase (its whole run). Page g's
 * accesses in phase ph are estimated as its region's phase count times its
 * share of that region in the task's whole-run counts.
 *
 * Parameters ("published" = the system's paper or code default; "assumed"
 * = our choice where none applies to a simulated timeline):
 *   tpp     Linux TPP (Maruf et al., ASPLOS'23) on NUMA-balancing hint
 *           faults. Hint-fault scan window: half the pages per phase,
 *           cyclic (assumed). A fault is seen with probability
 *           1 - exp(-lambda), lambda = the page's phase accesses / the
 *           phase's 90th-percentile touched page (the hint-fault latency
 *           threshold, tuned as for hot-first; assumed). Promotion only
 *           from the active LRU: the first fault activates, the next one
 *           promotes (published, TPP). Fast-tier LRU aging once per phase
 *           by the accessed bit (assumed). A failed promotion wakes
 *           reclaim, which demotes from the inactive LRU, least recently
 *           seen first, the failed count plus a 2 % headroom (demotion
 *           watermark, assumed), then the promotions are retried.
 *   hemem   HeMem (Raybuck et al., SOSP'21). 2 MiB units (512 pages; an
 *           object's tail or a smaller object: one shorter unit). PEBS-like
 *           samples: Poisson(accesses / period), period = run accesses /
 *           (4 x pages) (assumed, ~4 samples per 4 KiB page per run; the
 *           published 5003 or 10007 would leave our short profiled runs
 *           nearly unsampled). Per-unit read and write counters; cooling
 *           halves all when one reaches 18; hot at >= 8 sampled reads or
 *           >= 4 writes (published: HeMem pebs.h PEBS_COOLING_THRESHOLD,
 *           HOT_READ_THRESHOLD, HOT_WRITE_THRESHOLD). Policy at every phase
 *           end (published: every 10 ms): hot units, hottest first, move
 *           in whole, cold units move out to make room.
 *   memtis  MEMTIS (Lee et al., SOSP'23). Units as hemem; samples as hemem
 *           at 25x the rate (assumed; the published periods are 199 vs
 *           HeMem's 5003). Log2 histogram of 16 bins (published, htmm
 *           get_idx); a unit counts as its pages in the bin of its summed
 *           samples. Hot threshold: the lowest bin whose items still fit
 *           the capacity, at least 1 (published: htmm_thres_hot 1), adapted
 *           every phase; counters halved every 20 phases (published ratio
 *           htmm_cooling_period / htmm_adaptation_period = 2e6 / 1e5; a
 *           phase as the adaptation period is assumed). A unit is split
 *           into 4 KiB pages, which keep their counts, when its samples
 *           concentrate: (sum c)^2 / sum c^2 <= pages / 8 with at least 64
 *           samples (assumed; MEMTIS's skewness is sum c^2 over its hot
 *           subpages squared).
 *   damon   DAMON/DAMOS (Linux mm/damon). Regions over the page space,
 *           min 10 / max 1000 (published defaults); 20 samples per
 *           aggregation interval (published 5 ms / 100 ms), one interval
 *           per phase (assumed); per sample one random page per region,
 *           accessed bit with probability 1 - exp(-lambda), lambda as tpp;
 *           then merge of adjacent regions whose nr_accesses differ by at
 *           most max / 10 within size total / min_nr_regions, the scheme,
 *           and a split of each region in two at a random 10..90 % point
 *           while at most max / 2 regions (published, mm/damon/core.c).
 *           Scheme (migrate_hot-like): regions with nr_accesses >= 1
 *           (assumed), hottest first, into fast memory up to the capacity,
 *           coldest regions out to make room.
 *   colloid Colloid (Vuppalapati and Agarwal, SOSP'24). Pages ranked by
 *           accessed-bit hotness (pd_sim_accessed_bit_hotness: 64 scans of
 *           a 25 % sample, as hot-first); the hottest k <= cap_pages go to
 *           fast memory, k the largest with loaded fast latency <= loaded
 *           slow latency x 1.05 (hysteresis, assumed), loaded latency =
 *           u_t (exec_model's phase-0 stretch, what Colloid measures with
 *           CHA counters) x the tier's idle latency over the access-pattern
 *           mix. min(cap_pages, npages) - k is held back on purpose. */
#ifndef PD_SIM_BASELINES_H
#define PD_SIM_BASELINES_H

#include <stddef.h>
#include <stdint.h>

#include "sim/profile.h"
#include "sim/tier.h"

/* What a run did, for tests and reports (filled when opts->stats != NULL). */
typedef struct {
    size_t damon_regions_min, damon_regions_max; /* after every regions update */
    size_t memtis_splits;                        /* units split into 4 KiB pages */
} pd_sim_bl_stats;

typedef struct {
    uint64_t seed;
    pd_sim_bl_stats *stats; /* optional output, NULL = none */
} pd_sim_bl_opts;

/* All return 0, or -1 when out of memory (fast is then undefined). o may
 * be NULL (seed 0). */
int pd_sim_bl_tpp(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast);
int pd_sim_bl_hemem(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast);
int pd_sim_bl_memtis(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast);
int pd_sim_bl_damon(const pd_sim_profile *p, size_t cap_pages, const pd_sim_bl_opts *o, double *fast);
/* *held_back: capacity (pages) left unused on purpose because the fast
 * tier's loaded latency would exceed the slow tier's. */
int pd_sim_bl_colloid(const pd_sim_profile *p, const pd_sim_machine *m, size_t cap_pages,
                      const pd_sim_bl_opts *o, double *fast, size_t *held_back);

/* Accessed-bit sampling over the timeline: `scans` scans (0 = 64) spread
 * evenly over the phases, each sampling a `frac` (0 = 0.25) of the pages;
 * a sampled page shows its bit with probability 1 - exp(-lambda), lambda
 * its phase accesses / the phase's 90th-percentile touched page.
 * hot[npages] = bits seen / samples (0 when never sampled). 0 or -1 (OOM). */
int pd_sim_accessed_bit_hotness(const pd_sim_profile *p, uint64_t seed, int scans, double frac,
                                double *hot);

#endif
