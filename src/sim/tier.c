/* Tier presets. Sources (see docs/sim.md):
 *  - DRAM and Optane PMem 100 idle latencies: Izraelevitz et al., "Basic
 *    Performance Measurements of the Intel Optane DC Persistent Memory
 *    Module" (2019): DRAM 81 ns, PMem 169 ns sequential / 305 ns random,
 *    i.e. the 2.08x / 3.77x of the design; PMem bandwidth 3.87x (read) and
 *    4.74x (write) below DRAM as in the design.
 *  - CXL memory expander: Pond (Li et al., ASPLOS'23) reports +70..90 ns over
 *    local DRAM; Sun et al., "Demystifying CXL Memory" (MICRO'23) measure
 *    roughly half the bandwidth of local DDR for one expander. We use +85 ns
 *    and 0.5x read / 0.45x write.
 *  - cxl-slow: the slow end of real CXL expansion cards, 2-5x local DRAM
 *    latency ("Exploring and Evaluating Real-world CXL", arXiv 2405.14209):
 *    5x, with a quarter of DRAM's bandwidth (assumed).
 * The DRAM bandwidth is that of an 8-core slice of a socket (the profiles
 * have 8 tasks): 34 GB/s read, 26 GB/s write. */
#include <string.h>

#include "sim/tier.h"

#define DRAM_LAT 81.0
#define DRAM_BW_R 34.0
#define DRAM_BW_W 26.0

const char *const pd_sim_preset_names[] = {"optane", "cxl", "cxl-slow", "dram", NULL};

int pd_sim_machine_preset(const char *name, pd_sim_machine *out)
{
    if (!name || !out)
        return -1;
    memset(out, 0, sizeof *out);
    pd_sim_tier dram = {DRAM_LAT, DRAM_LAT, DRAM_BW_R, DRAM_BW_W};
    pd_sim_tier slow;
    if (!strcmp(name, "optane")) {
        slow = (pd_sim_tier){DRAM_LAT * 2.08, DRAM_LAT * 3.77, DRAM_BW_R / 3.87, DRAM_BW_W / 4.74};
        out->desc = "DRAM + Optane PMem 100 (2.08x/3.77x latency, 3.87x/4.74x less bandwidth)";
    } else if (!strcmp(name, "cxl")) {
        slow = (pd_sim_tier){DRAM_LAT + 85.0, DRAM_LAT + 85.0, DRAM_BW_R * 0.5, DRAM_BW_W * 0.45};
        out->desc = "DRAM + CXL memory expander (+85 ns, 0.5x/0.45x bandwidth)";
    } else if (!strcmp(name, "cxl-slow")) {
        slow = (pd_sim_tier){DRAM_LAT * 5, DRAM_LAT * 5, DRAM_BW_R * 0.25, DRAM_BW_W * 0.25};
        out->desc = "DRAM + slow CXL expander (5x latency, 0.25x bandwidth)";
    } else if (!strcmp(name, "dram")) {
        slow = dram;
        out->desc = "DRAM + DRAM (control: both tiers equal)";
    } else {
        return -1;
    }
    strncpy(out->name, name, sizeof out->name - 1);
    out->tier[PD_SIM_FAST] = dram;
    out->tier[PD_SIM_SLOW] = slow;
    return 0;
}

void pd_sim_machine_scale_bw(pd_sim_machine *m, double factor)
{
    for (int t = 0; t < PD_SIM_NTIERS; t++) {
        m->tier[t].bw_read_gbs *= factor;
        m->tier[t].bw_write_gbs *= factor;
    }
}
