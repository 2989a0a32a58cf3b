/* paddiser tiers: what the tier discovery of libpaddiser sees on this machine
 * (nodes, CPU-less nodes, memory tiers, HMAT access0 values) and which
 * fast/slow node pair the numa backend would use. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "paddiser_tiers.h"

#define CMD "paddiser tiers"

static void usage(FILE *out)
{
    fprintf(out, "usage: paddiser tiers [--json]\n\n"
                 "Lists the NUMA nodes with memory, their kernel memory tier and HMAT\n"
                 "access0 latency (ns) / bandwidth (MB/s), and the fast/slow pair libpaddiser\n"
                 "migrates between. PADDISER_SYS_ROOT replaces /sys (fixtures).\n\n"
                 "options:\n"
                 "      --json   one JSON object on stdout instead of the table (bytes, ns\n"
                 "               and MB/s as numbers; null where the kernel says nothing)\n"
                 "  -h, --help   this help\n");
}

/* A JSON string: the reason text is ASCII, but quote and escape it anyway. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* A count where 0 means unknown: the number, or null. */
static void json_known(const char *key, unsigned long long v)
{
    if (v)
        printf(", \"%s\": %llu", key, v);
    else
        printf(", \"%s\": null", key);
}

/* The same facts as the table, for scripts (issue #17). */
static void print_json(const pd_tiers *t)
{
    printf("{\"nodes\": [");
    for (int i = 0; i < t->nnodes; i++) {
        const pd_tier_node *n = &t->node[i];
        const char *role = n->id == t->fast_node ? "fast" : n->id == t->slow_node ? "slow" : NULL;
        printf("%s{\"node\": %d, \"cpus\": %d, \"cpuless\": %s", i ? ", " : "", n->id, n->ncpus,
               n->cpuless ? "true" : "false");
        json_known("mem_total_bytes", n->mem_total);
        if (n->mem_total) /* free may be 0 on a full node */
            printf(", \"mem_free_bytes\": %llu", n->mem_free);
        else
            printf(", \"mem_free_bytes\": null");
        if (n->tier >= 0)
            printf(", \"tier\": %d", n->tier);
        else
            printf(", \"tier\": null");
        json_known("read_latency_ns", n->read_latency_ns);
        json_known("write_latency_ns", n->write_latency_ns);
        json_known("read_bw_mbps", n->read_bw_mbps);
        json_known("write_bw_mbps", n->write_bw_mbps);
        printf(", \"role\": ");
        if (role)
            json_string(role);
        else
            printf("null");
        printf("}");
    }
    printf("], \"fast_node\": %d, \"slow_node\": ", t->fast_node);
    if (t->slow_node >= 0)
        printf("%d", t->slow_node);
    else
        printf("null");
    printf(", \"reason\": ");
    json_string(t->reason);
    printf("}\n");
}

static void put_num(char *buf, size_t len, unsigned long v)
{
    if (v)
        snprintf(buf, len, "%lu", v);
    else
        snprintf(buf, len, "-");
}

static void put_bytes(char *buf, size_t len, unsigned long long v)
{
    if (v)
        snprintf(buf, len, "%.1f GiB", (double)v / (1024.0 * 1024.0 * 1024.0));
    else
        snprintf(buf, len, "-");
}

int cmd_tiers(int argc, char **argv)
{
    /* getopt_long as the other commands do (common/cliopt.h), without
     * linking cliopt.c: mk/numa.mk builds this file alone, with util.c and
     * sysroot.c, for the QEMU guest. */
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    char *argv0 = argv[0];
    argv[0] = (char *)CMD; /* getopt's messages name the command */
    optind = 0;
    opterr = 1;
    int c;
    bool json = false;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) == 'j')
        json = true;
    argv[0] = argv0;
    if (c == 'h') {
        usage(stdout);
        return 0;
    }
    if (c != -1 || optind < argc) {
        if (c == -1)
            fprintf(stderr, CMD ": unexpected argument '%s'\n", argv[optind]);
        fprintf(stderr, "Try '" CMD " --help'.\n");
        return 2;
    }
    pd_tiers t;
    char err[512];
    if (pd_tiers_discover(&t, err, sizeof err)) {
        fprintf(stderr, "paddiser tiers: %s\n", err);
        return 1;
    }
    if (json) {
        print_json(&t);
        return 0;
    }
    printf("%-5s %-5s %-10s %-10s %-5s %-8s %-9s %-8s %-8s %s\n", "node", "cpus", "memory", "free", "tier",
           "rd_lat", "wr_lat", "rd_bw", "wr_bw", "role");
    for (int i = 0; i < t.nnodes; i++) {
        const pd_tier_node *n = &t.node[i];
        char mem[32], fr[32], tier[16], rl[24], wl[24], rb[24], wb[24];
        put_bytes(mem, sizeof mem, n->mem_total);
        put_bytes(fr, sizeof fr, n->mem_free);
        if (n->tier >= 0)
            snprintf(tier, sizeof tier, "%d", n->tier);
        else
            snprintf(tier, sizeof tier, "-");
        put_num(rl, sizeof rl, n->read_latency_ns);
        put_num(wl, sizeof wl, n->write_latency_ns);
        put_num(rb, sizeof rb, n->read_bw_mbps);
        put_num(wb, sizeof wb, n->write_bw_mbps);
        const char *role = n->id == t.fast_node ? "fast" : n->id == t.slow_node ? "slow" : "";
        char cpus[16];
        if (n->cpuless)
            snprintf(cpus, sizeof cpus, "none");
        else
            snprintf(cpus, sizeof cpus, "%d", n->ncpus);
        printf("%-5d %-5s %-10s %-10s %-5s %-8s %-9s %-8s %-8s %s\n", n->id, cpus, mem, fr, tier, rl, wl, rb, wb,
               role);
    }
    if (t.slow_node >= 0)
        printf("fast node %d, slow node %d: %s\n", t.fast_node, t.slow_node, t.reason);
    else
        printf("%s\n", t.reason);
    return 0;
}
