/* Simulated memory tiers. A machine is a fast tier (DRAM) and a slow tier
 * (Optane PMem, a CXL expander, or DRAM again as a control). Latencies are
 * idle load-to-use latencies in ns, bandwidths the peak of the whole
 * simulated machine (all tasks together) in GB/s (1e9 bytes/s). */
#ifndef PD_SIM_TIER_H
#define PD_SIM_TIER_H

#include <stddef.h>

enum { PD_SIM_FAST = 0, PD_SIM_SLOW = 1, PD_SIM_NTIERS = 2 };

typedef struct {
    double lat_seq_ns;   /* sequential / prefetchable access */
    double lat_rand_ns;  /* random access */
    double bw_read_gbs;
    double bw_write_gbs;
} pd_sim_tier;

typedef struct {
    char name[32];
    const char *desc;
    pd_sim_tier tier[PD_SIM_NTIERS];
} pd_sim_machine;

/* Preset names: "optane", "cxl", "dram". 0 on success, -1 when unknown. */
int pd_sim_machine_preset(const char *name, pd_sim_machine *out);
/* NULL-terminated list of preset names. */
extern const char *const pd_sim_preset_names[];
/* Scales both tiers' bandwidth (sensitivity studies); factor > 0. */
void pd_sim_machine_scale_bw(pd_sim_machine *m, double factor);

#endif
