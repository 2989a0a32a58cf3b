/* Features from profiles (see features.h). Instructions are not measurable
 * here: a cache-resident task is assumed to retire 2 instructions per cycle
 * at 2.5 GHz. */
#include <math.h>

#include "sim/features.h"

#define SIM_GHZ 2.5
#define SIM_IPC_COMPUTE 2.0

int pd_sim_task_features(const pd_sim_profile *p, int task, double t_dram,
                         double feat[PD_SIM_NFEATURES])
{
    const pd_sim_task *tk = &p->tasks[task];
    double lines = 0, rd = 0, rnd = 0, rnd_rd = 0, vec = 0;
    for (int o = 0; o < p->nobjects; o++) {
        const pd_sim_object *ob = &p->objects[o];
        for (size_t g = ob->page_base; g < ob->page_base + ob->npages; g++) {
            double a = (double)tk->reads[g] + (double)tk->writes[g];
            lines += a, rd += (double)tk->reads[g];
            if (ob->pattern == PD_PATTERN_RANDOM || ob->pattern == PD_PATTERN_UNKNOWN)
                rnd += a, rnd_rd += (double)tk->reads[g];
            if (ob->pattern == PD_PATTERN_STREAM || ob->pattern == PD_PATTERN_STENCIL)
                vec += a;
        }
    }
    if (lines <= 0 || t_dram <= 0)
        return -1;
    double instr = fmax(tk->compute_s, 1e-9) * SIM_GHZ * 1e9 * SIM_IPC_COMPUTE;
    feat[0] = 1000 * lines / instr;                 /* llc_mpki */
    feat[1] = instr / (t_dram * SIM_GHZ * 1e9);     /* ipc */
    feat[2] = rnd / lines;                          /* prf_miss: not prefetchable */
    feat[3] = fmax(0, (t_dram - tk->compute_s) / t_dram); /* mem_wcy: stall share */
    feat[4] = 1000 * rd / instr;                    /* l2_ld_miss */
    feat[5] = 0;                                    /* br_msp: not derivable */
    feat[6] = vec / lines;                          /* vec_ins: vectorisable share */
    feat[7] = 1000 * rnd_rd / instr;                /* l3_ld_miss */
    return 0;
}
