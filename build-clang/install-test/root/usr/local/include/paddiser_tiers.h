/* libpaddiser memory-tier discovery.
 *
 * Reads what Linux exposes about heterogeneous memory (read-only):
 *   /sys/devices/system/node/online, nodeN/cpulist, nodeN/meminfo
 *       nodes; an empty cpulist means a memory-only (CPU-less) node, which is
 *       how CXL memory and PMem in system-RAM mode (dax/kmem) appear;
 *   /sys/devices/virtual/memory_tiering/memory_tierN/nodelist
 *       the kernel's tiers (Linux >= 6.1); a higher N is a slower tier;
 *   /sys/devices/system/node/nodeN/access0/initiators/{read,write}_{latency,bandwidth}
 *       HMAT performance from the nearest initiator (ns, MB/s), where the
 *       firmware publishes an HMAT.
 * PADDISER_SYS_ROOT replaces /sys (test fixtures).
 *
 * A fast/slow pair is chosen from these: the fast node is a node with CPUs in
 * the best tier; the slow node is a node with memory that is worse by memory
 * tier, else by HMAT read latency, else (no tier/HMAT information) a CPU-less
 * node. A machine where no such node exists has "no slow tier". */
#ifndef PADDISER_TIERS_H
#define PADDISER_TIERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the exported API: the library is built with -fvisibility=hidden. */
#ifndef PD_API
#if defined(__GNUC__) || defined(__clang__)
#define PD_API __attribute__((visibility("default")))
#else
#define PD_API
#endif
#endif

#define PD_TIERS_MAX_NODES 64

typedef struct {
    int id;
    int ncpus;                     /* CPUs in cpulist; 0 = memory-only node */
    int cpuless;                   /* ncpus == 0 */
    unsigned long long mem_total;  /* bytes (nodeN/meminfo MemTotal), 0 = none/unknown */
    unsigned long long mem_free;   /* bytes (MemFree) */
    int tier;                      /* memory_tier id, -1 = not listed / no memory_tiering */
    int has_hmat;                  /* 1 when access0/initiators values were read */
    unsigned long read_latency_ns, write_latency_ns;  /* HMAT access0, 0 = unknown */
    unsigned long read_bw_mbps, write_bw_mbps;        /* HMAT access0 (MB/s), 0 = unknown */
} pd_tier_node;

typedef struct {
    int nnodes;
    pd_tier_node node[PD_TIERS_MAX_NODES];
    int numa_exposed;   /* 0 when /sys/devices/system/node is missing (no NUMA kernel) */
    int has_tiering;    /* /sys/devices/virtual/memory_tiering exists */
    int ntiers;         /* distinct memory_tier ids seen (0 without memory_tiering) */
    int fast_node;      /* chosen pair; slow_node = -1 when there is no slow tier */
    int slow_node;
    char reason[160];   /* why this pair, or why there is no slow tier */
} pd_tiers;

/* Discovers nodes, tiers and HMAT values and chooses the fast/slow pair.
 * Returns 0, or -1 with a message naming the offending file in err (a file
 * that exists but cannot be parsed). A kernel without NUMA in sysfs is not an
 * error: one node 0, no slow tier. */
PD_API int pd_tiers_discover(pd_tiers *t, char *err, size_t errlen);

/* Node entry by id, or NULL. */
PD_API const pd_tier_node *pd_tiers_node(const pd_tiers *t, int id);

/* (Re)chooses fast_node/slow_node/reason from the discovered nodes; returns 1
 * when a slow tier exists, else 0 (slow_node = -1). Called by discover. */
PD_API int pd_tiers_choose(pd_tiers *t);

/* Is node `slow` a slower tier than node `fast` (same rule as the choice)? */
PD_API int pd_tiers_is_slower(const pd_tier_node *slow, const pd_tier_node *fast);

#ifdef __cplusplus
}
#endif

#endif
