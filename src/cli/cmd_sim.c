/* paddiser sim: the simulated heterogeneous-memory evaluation (docs/sim.md).
 *   sim tiers                      tier presets
 *   sim profile -w W -i IN -o F    run a workload kernel, write its access profile
 *   sim run ...                    all policies at one capacity (bench-friendly metrics)
 *   sim study ...                  the capacity sweep and docs/results.md
 *   sim gen-training -o F ...      training CSV for the Eq. 2 model
 *   sim verify|sampling|runtime    kernel checks, libpaddiser's sampling and placement
 * Each subcommand takes its own subset of the options below (sim_subs). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/cliopt.h"
#include "common/util.h"
#include "sim/study.h"
#include "sim/scorer.h"
#include "sim/workload.h"

#define DEFAULT_PROFILE_DIR "build/sim/profiles"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: paddiser sim <subcommand> [options]\n\n"
            "  tiers                          list the tier presets\n"
            "  profile -w W [-i IN] -o FILE   run workload W on input IN, write its access profile\n"
            "  compress -p IN --unit U -o OUT a profile at a coarser unit (version 3, e.g. 2M)\n"
            "  run [-p FILE | -w W -i IN]     evaluate every policy at one capacity\n"
            "  study [-o docs/results.md]     capacity sweep over workloads, inputs and tiers\n"
            "  gen-training -o FILE           Eq. 2 model-training CSV from the profiles\n"
            "  verify [-w LIST] [-i LIST]     run kernels and check their results\n"
            "  sampling [-w LIST] [-i LIST]   libpaddiser's sampled accesses vs the exact counts\n"
            "  runtime [-w LIST] [-c LIST]    libpaddiser's own placement (sim backend) vs the policies\n\n"
            "options:\n"
            "  -h, --help   this help\n\n"
            "Run 'paddiser sim <subcommand> --help' for a subcommand's options.\n");
}

/* Help lines shared by several subcommands. */
#define H_PROFILES                                                                                   \
    "      --profile-dir DIR profile cache (default " DEFAULT_PROFILE_DIR ")\n"                       \
    "      --refresh         re-run the workloads even when cached profiles exist\n"                 \
    "  -r, --reps N          timed runs per profile (task time = min; 1..100, default 3)\n"
#define H_PLANNER                                                                                    \
    "      --seed N          sampling / frame-placement seed (default 1)\n"                          \
    "      --step S          planner share step, in (0, 0.5] (default 0.05)\n"                       \
    "      --rounds N        planner rounds re-planning capacity left by shared pages (1..16, default 3)\n"
#define H_HELP "  -h, --help            this help\n"
#define H_WORKLOADS(dflt) "  -w, --workload LIST   comma list of spgemm,bfs,stencil,dmrg (default " dflt ")\n"
#define H_INPUTS(dflt) "  -i, --input LIST      comma list of tiny,base,in1,in2,in3,large (default " dflt ")\n"

static const char help_tiers[] =
    "usage: paddiser sim tiers\n"
    "Lists the tier presets: latency and bandwidth of their fast and slow tiers.\n"
    "options:\n" H_HELP;

static const char help_profile[] =
    "usage: paddiser sim profile -w W [-i IN] -o FILE [options]\n"
    "Runs workload W on input IN and writes its access profile (for 'sim run -p FILE').\n"
    "options:\n"
    "  -w, --workload W      spgemm, bfs, stencil or dmrg\n"
    "  -i, --input IN        tiny, base, in1, in2, in3 or large (>= 1 GiB) (default base)\n"
    "  -o, --output FILE     where to write the profile\n"
    "  -r, --reps N          timed runs (task time = min; 1..100, default 3)\n"
    "      --unit U          save at unit U bytes (K/M suffix; a power of two, default 4K):\n"
    "                        a compressed version-3 profile\n" H_HELP;

static const char help_compress[] =
    "usage: paddiser sim compress -p IN --unit U -o OUT\n"
    "Writes profile IN at the coarser unit U (counts per task summed per unit; a version-3\n"
    "file whose size scales with footprint / U; docs/sim.md).\n"
    "options:\n"
    "  -p, --profile FILE    the profile to compress\n"
    "      --unit U          bytes, K/M suffix: a power of two, a multiple of IN's unit (e.g. 2M)\n"
    "  -o, --output FILE     where to write it\n" H_HELP;

static const char help_run[] =
    "usage: paddiser sim run [-p FILE | -w W [-i IN]] [options]\n"
    "Evaluates every placement policy at one capacity on one tier preset.\n"
    "options:\n"
    "  -w, --workload W      spgemm, bfs, stencil or dmrg (its profile is cached)\n"
    "  -i, --input IN        tiny, base, in1, in2 or in3 (default base)\n"
    "  -p, --profile FILE    use this profile file instead of running a workload\n"
    "  -t, --tier T          tier preset: optane, cxl, cxl-slow or dram (default optane)\n"
    "  -c, --capacity C      fast-memory fraction of the footprint, in [0, 1] (default 0.5)\n"
    "  -P, --policy NAME     the policy the metrics and gains are of: first-touch, hot-first,\n"
    "                        memory-mode, greedy, exact, hot-exact (default exact)\n"
    "      --metrics FILE    write the metrics as a flat JSON object\n"
    "      --tasks-csv FILE  per-task times (policy,task,time_s,dram_share,dram_bytes)\n"
    H_PROFILES H_PLANNER H_HELP;

static const char help_study[] =
    "usage: paddiser sim study [options]\n"
    "libpaddiser as shipped vs every baseline, scored by the independent scorer with 95% intervals\n"
    "over repeats and sensitivity bands: the tables of docs/results.md.\n"
    "options:\n"
    H_WORKLOADS("all") H_INPUTS("base,in1,in2,in3")
    "  -t, --tier LIST       comma list of optane,cxl,cxl-slow,dram (default optane,cxl,cxl-slow)\n"
    "  -c, --capacity LIST   fast-memory fractions: 0.5, 0.1,0.5 or 0.1:0.9:0.1 (default 0.1:0.9:0.2)\n"
    "  -o, --output FILE     write the markdown tables\n"
    "      --csv FILE        one row per workload,tier,capacity,input,policy,repeat\n"
    "      --repeats N       fresh profiles and seeds per repeat, 1..30 (default 5; --quick 1)\n"
    "      --quick           base input, optane, capacities 0.2,0.5,0.8, 1 rep, 1 repeat\n"
    "      --migrate-gbs GBS migration throughput charged, GB/s (default: each preset's, the\n"
    "                        cited 3.31 GB/s of 4 KiB move_pages; make bench-migrate measures one)\n"
    "  -v, --verbose         progress with elapsed time and ETA on stderr (on by default\n"
    "                        when stderr is a terminal)\n"
    H_PROFILES H_PLANNER H_HELP;

static const char help_gen_training[] =
    "usage: paddiser sim gen-training -o FILE [options]\n"
    "Writes the Eq. 2 model-training CSV from the workloads' profiles.\n"
    "options:\n"
    H_WORKLOADS("all") H_INPUTS("base,in1,in2,in3")
    "  -t, --tier T          tier preset: optane, cxl, cxl-slow or dram (default optane)\n"
    "  -o, --output FILE     where to write the CSV\n"
    "  -n, --placements N    placements per task, 1..1000 (default 10)\n"
    "      --seed N          placement seed (default 1)\n"
    H_PROFILES H_HELP;

static const char help_verify[] =
    "usage: paddiser sim verify [-w LIST] [-i LIST]\n"
    "Runs the workload kernels and checks their results against a serial recomputation.\n"
    "options:\n" H_WORKLOADS("all") H_INPUTS("base") H_HELP;

static const char help_sampling[] =
    "usage: paddiser sim sampling [-w LIST] [-i LIST]\n"
    "Runs the workloads under libpaddiser and compares its sampled accesses with the exact counts.\n"
    "options:\n" H_WORKLOADS("all") H_INPUTS("base") H_HELP;

static const char help_runtime[] =
    "usage: paddiser sim runtime [options]\n"
    "libpaddiser's own placement (sim backend) vs the simulated policies, per capacity.\n"
    "options:\n"
    H_WORKLOADS("all") H_INPUTS("base")
    "  -t, --tier T          tier preset: optane, cxl, cxl-slow or dram (default optane)\n"
    "  -c, --capacity LIST   fast-memory fractions: 0.5, 0.1,0.5 or 0.1:0.9:0.1 (default 0.1,0.3,0.5,0.7)\n"
    "      --migrate-gbs GBS migration throughput the runtime weighs its moves at, GB/s, brought to\n"
    "                        its own time as in the study (default: the tier preset's)\n"
    H_PROFILES H_PLANNER H_HELP;

typedef struct {
    char **v;
    int n;
} strlist;

static void strlist_free(strlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int strlist_split(strlist *l, const char *text)
{
    strlist_free(l);
    char *copy = pd_strdup(text), *save = NULL;
    if (!copy)
        return -1;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        char **nv = realloc(l->v, (size_t)(l->n + 1) * sizeof *nv);
        char *item = nv ? pd_strdup(pd_trim(tok)) : NULL;
        if (nv)
            l->v = nv;
        if (item)
            l->v[l->n++] = item;
        else
            rc = -1;
    }
    free(copy);
    if (rc != 0)
        strlist_free(l);
    return rc == 0 && l->n > 0 ? 0 : -1;
}

/* "0.5", "0.1,0.3" or "0.1:0.9:0.1"; each in [0, 1] (NaN is not), at most
 * MAX_CAPS points. */
#define MAX_CAPS 1000

static int parse_caps(const char *text, double **out, int *n)
{
    free(*out);
    *out = NULL;
    *n = 0;
    double a, b, s;
    char extra;
    if (sscanf(text, "%lf:%lf:%lf%c", &a, &b, &s, &extra) == 3) {
        if (!(s > 0) || !(a >= 0 && a <= b && b <= 1) || (b - a) / s >= MAX_CAPS)
            return -1;
        int cnt = (int)((b - a) / s + 1e-9) + 1;
        *out = malloc((size_t)cnt * sizeof **out);
        if (!*out)
            return -1;
        for (int k = 0; k < cnt; k++)
            (*out)[k] = fmin(a + k * s, b); /* no 1.0000000000000002 past the end */
        *n = cnt;
        return 0;
    }
    strlist l = {0};
    if (strlist_split(&l, text) != 0)
        return -1;
    *out = malloc((size_t)l.n * sizeof **out);
    int rc = *out ? 0 : -1;
    for (int k = 0; rc == 0 && k < l.n; k++)
        if (!pd_parse_double(l.v[k], &(*out)[k]) || !((*out)[k] >= 0 && (*out)[k] <= 1))
            rc = -1;
    *n = l.n;
    strlist_free(&l);
    return rc;
}

typedef struct {
    strlist workloads, inputs, tiers;
    double *caps;
    int ncaps;
    const char *policy, *profile, *profile_dir, *metrics, *tasks_csv, *output, *csv;
    int refresh, reps, placements, quick, verbose, repeats;
    double migrate_gbs; /* study, runtime: > 0 overrides the presets' migration throughput */
    size_t unit;        /* profile, compress: the unit to save at (0 = as measured) */
    pd_sim_policy_opts opts;
    const char *cmd; /* "paddiser sim run": names the subcommand in messages */
    int argc;        /* the subcommand's arguments, argv[0] its name */
    char **argv;
} sim_args;

enum { OPT_PROFILE_DIR = 1000, OPT_REFRESH, OPT_SEED, OPT_STEP, OPT_METRICS, OPT_TASKS_CSV,
       OPT_CSV, OPT_QUICK, OPT_ROUNDS, OPT_REPEATS, OPT_MIGRATE_GBS, OPT_UNIT };

/* Every option of the subcommands; each subcommand takes those its sim_sub
 * lists, and -h/--help. */
static const struct option all_opts[] = {
    {"workload", required_argument, NULL, 'w'}, {"input", required_argument, NULL, 'i'},
    {"tier", required_argument, NULL, 't'}, {"capacity", required_argument, NULL, 'c'},
    {"policy", required_argument, NULL, 'P'}, {"profile", required_argument, NULL, 'p'},
    {"profile-dir", required_argument, NULL, OPT_PROFILE_DIR}, {"refresh", no_argument, NULL, OPT_REFRESH},
    {"reps", required_argument, NULL, 'r'}, {"seed", required_argument, NULL, OPT_SEED},
    {"step", required_argument, NULL, OPT_STEP}, {"metrics", required_argument, NULL, OPT_METRICS},
    {"tasks-csv", required_argument, NULL, OPT_TASKS_CSV}, {"output", required_argument, NULL, 'o'},
    {"csv", required_argument, NULL, OPT_CSV}, {"placements", required_argument, NULL, 'n'},
    {"quick", no_argument, NULL, OPT_QUICK}, {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"repeats", required_argument, NULL, OPT_REPEATS}, {"verbose", no_argument, NULL, 'v'},
    {"migrate-gbs", required_argument, NULL, OPT_MIGRATE_GBS}, {"unit", required_argument, NULL, OPT_UNIT},
};

#define MAX_SUB_OPTS 24

typedef struct {
    const char *name;
    int (*run)(sim_args *a);
    const char *help;
    int opts[MAX_SUB_OPTS]; /* the options it takes (vals of all_opts), 0-terminated */
} sim_sub;

static const char *opt_name(int val)
{
    for (size_t k = 0; k < PD_ARRAY_LEN(all_opts); k++)
        if (all_opts[k].val == val)
            return all_opts[k].name;
    return "?";
}

/* 0 after --help, 2 on a usage error (reported), -1 to go on. */
static int parse_args(const sim_sub *sub, int argc, char **argv, sim_args *a)
{
    struct option longopts[PD_ARRAY_LEN(all_opts) + 2]; /* + help, end */
    char shortopts[2 * PD_ARRAY_LEN(all_opts) + 2];
    size_t nl = 0, ns = 0;
    for (size_t k = 0; k < PD_ARRAY_LEN(all_opts); k++) {
        int taken = 0;
        for (const int *o = sub->opts; *o && !taken; o++)
            taken = *o == all_opts[k].val;
        if (!taken)
            continue;
        longopts[nl++] = all_opts[k];
        if (all_opts[k].val < 256) {
            shortopts[ns++] = (char)all_opts[k].val;
            if (all_opts[k].has_arg)
                shortopts[ns++] = ':';
        }
    }
    longopts[nl++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[nl] = (struct option){NULL, 0, NULL, 0};
    shortopts[ns++] = 'h';
    shortopts[ns] = '\0';

    int c;
    long l;
    unsigned long long u;
    optind = 0;
    while ((c = pd_opt_next(a->cmd, argc, argv, shortopts, longopts)) != -1) {
        switch (c) {
        case 'w':
        case 'i':
        case 't':
            if (strlist_split(c == 'w' ? &a->workloads : c == 'i' ? &a->inputs : &a->tiers, optarg) != 0) {
                fprintf(stderr, "%s: --%s: empty list '%s'\n", a->cmd, opt_name(c), optarg);
                return 2;
            }
            break;
        case 'c':
            if (parse_caps(optarg, &a->caps, &a->ncaps) != 0) {
                fprintf(stderr, "%s: bad --capacity '%s' (fractions in [0,1]: 0.5, 0.1,0.5 or 0.1:0.9:0.1, at most %d points)\n",
                        a->cmd, optarg, MAX_CAPS);
                return 2;
            }
            break;
        case 'P': a->policy = optarg; break;
        case 'p': a->profile = optarg; break;
        case OPT_PROFILE_DIR: a->profile_dir = optarg; break;
        case OPT_REFRESH: a->refresh = 1; break;
        case 'r':
            if (!pd_opt_long(a->cmd, "--reps", optarg, 1, 100, &l))
                return 2;
            a->reps = (int)l;
            break;
        case OPT_SEED:
            if (!pd_parse_u64(optarg, &u)) {
                fprintf(stderr, "%s: --seed must be a non-negative integer, got '%s'\n", a->cmd, optarg);
                return 2;
            }
            a->opts.seed = u;
            break;
        case OPT_STEP:
            if (!pd_parse_double(optarg, &a->opts.step) || !(a->opts.step > 0 && a->opts.step <= 0.5)) {
                fprintf(stderr, "%s: --step must be in (0, 0.5], got '%s'\n", a->cmd, optarg);
                return 2;
            }
            break;
        case OPT_ROUNDS:
            if (!pd_opt_long(a->cmd, "--rounds", optarg, 1, 16, &l))
                return 2;
            a->opts.rounds = (int)l;
            break;
        case OPT_METRICS: a->metrics = optarg; break;
        case OPT_REPEATS:
            if (!pd_opt_long(a->cmd, "--repeats", optarg, 1, 30, &l))
                return 2;
            a->repeats = (int)l;
            break;
        case OPT_TASKS_CSV: a->tasks_csv = optarg; break;
        case OPT_UNIT: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!errno && end != optarg && (*end == 'K' || *end == 'k'))
                v <<= 10, end++;
            else if (!errno && end != optarg && (*end == 'M' || *end == 'm'))
                v <<= 20, end++;
            if (errno || end == optarg || *end || v < PD_SIM_PAGE || v > PD_SIM_MAX_UNIT || (v & (v - 1))) {
                fprintf(stderr, "%s: --unit must be a power of two from 4K to 1024M bytes, got '%s'\n", a->cmd,
                        optarg);
                return 2;
            }
            a->unit = (size_t)v;
            break;
        }
        case OPT_MIGRATE_GBS:
            if (!pd_parse_double(optarg, &a->migrate_gbs) || !(a->migrate_gbs > 0 && a->migrate_gbs <= 1000)) {
                fprintf(stderr, "%s: --migrate-gbs must be in (0, 1000] GB/s, got '%s'\n", a->cmd, optarg);
                return 2;
            }
            break;
        case 'o': a->output = optarg; break;
        case OPT_CSV: a->csv = optarg; break;
        case 'n':
            if (!pd_opt_long(a->cmd, "--placements", optarg, 1, 1000, &l))
                return 2;
            a->placements = (int)l;
            break;
        case OPT_QUICK: a->quick = 1; break;
        case 'v': a->verbose = 1; break;
        case 'h': fputs(sub->help, stdout); return 0;
        default: return 2;
        }
    }
    if (optind < argc)
        return pd_opt_error(a->cmd, "unexpected argument '%s'", argv[optind]);
    return -1; /* continue */
}

static void args_free(sim_args *a)
{
    strlist_free(&a->workloads);
    strlist_free(&a->inputs);
    strlist_free(&a->tiers);
    free(a->caps);
}

static int check_names(const sim_args *a)
{
    for (int k = 0; k < a->workloads.n; k++)
        if (!pd_workload_find(a->workloads.v[k])) {
            fprintf(stderr, "paddiser sim: unknown workload '%s' (spgemm, bfs, stencil, dmrg)\n", a->workloads.v[k]);
            return 2;
        }
    for (int k = 0; k < a->inputs.n; k++)
        if (pd_wl_input_index(a->inputs.v[k]) < 0) {
            fprintf(stderr, "paddiser sim: unknown input '%s' (tiny, base, in1, in2, in3, large)\n", a->inputs.v[k]);
            return 2;
        }
    for (int k = 0; k < a->tiers.n; k++) {
        pd_sim_machine m;
        if (pd_sim_machine_preset(a->tiers.v[k], &m) != 0) {
            fprintf(stderr, "paddiser sim: unknown tier preset '%s' (optane, cxl, cxl-slow, dram)\n", a->tiers.v[k]);
            return 2;
        }
    }
    return 0;
}

#define ALL_WORKLOADS "spgemm,bfs,stencil,dmrg"

/* Fills what the user left out (NULL: no default); 0, or -1 with a message
 * when out of memory. */
static int set_defaults(sim_args *a, const char *sub, const char *workloads, const char *inputs,
                        const char *tiers, const char *caps)
{
    const struct {
        strlist *list;
        const char *text;
    } lists[] = {{&a->workloads, workloads}, {&a->inputs, inputs}, {&a->tiers, tiers}};
    for (size_t k = 0; k < PD_ARRAY_LEN(lists); k++)
        if (lists[k].text && lists[k].list->n == 0 && strlist_split(lists[k].list, lists[k].text) != 0)
            goto oom;
    if (caps && a->ncaps == 0 && parse_caps(caps, &a->caps, &a->ncaps) != 0)
        goto oom;
    return 0;
oom:
    fprintf(stderr, "paddiser sim %s: out of memory\n", sub);
    return -1;
}

/* ---- subcommands ---------------------------------------------------------------- */

static int sim_tiers(sim_args *a)
{
    (void)a;
    printf("%-8s %-6s %12s %12s %12s %12s %12s  %s\n", "preset", "tier", "lat_seq_ns", "lat_rand_ns",
           "bw_read_GBs", "bw_write_GBs", "migrate_GBs", "description");
    for (int k = 0; pd_sim_preset_names[k]; k++) {
        pd_sim_machine m;
        pd_score_machine sm;
        pd_sim_machine_preset(pd_sim_preset_names[k], &m);
        pd_score_machine_preset(pd_sim_preset_names[k], &sm);
        /* migration: the scorer's 4 KiB page rate between the two tiers */
        for (int t = 0; t < PD_SIM_NTIERS; t++)
            printf("%-8s %-6s %12.1f %12.1f %12.2f %12.2f %12.2f  %s\n", m.name, t ? "slow" : "fast",
                   m.tier[t].lat_seq_ns, m.tier[t].lat_rand_ns, m.tier[t].bw_read_gbs,
                   m.tier[t].bw_write_gbs, sm.migrate_gbs, t ? m.desc : "");
    }
    return 0;
}

static int sim_profile(sim_args *a)
{
    if (a->workloads.n != 1 || !a->output) {
        fprintf(stderr, "paddiser sim profile: needs one --workload and --output FILE\n");
        return 2;
    }
    if (set_defaults(a, "profile", NULL, "base", NULL, NULL) != 0)
        return 1;
    char err[512] = "";
    const pd_workload *w = pd_workload_find(a->workloads.v[0]);
    pd_sim_profile *p = pd_wl_profile(w, a->inputs.v[0], a->reps ? a->reps : 3, err, sizeof err);
    if (p && a->unit > p->page_bytes) {
        pd_sim_profile *q = pd_sim_profile_coarsen(p, a->unit, err, sizeof err);
        pd_sim_profile_free(p);
        p = q;
    }
    if (!p || pd_sim_profile_save(p, a->output, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser sim profile: %s\n", err);
        pd_sim_profile_free(p);
        return 1;
    }
    printf("%s/%s: %d tasks, %d objects, %.1f MiB, profile in %s\n", p->workload, p->input,
           p->ntasks, p->nobjects, pd_sim_footprint(p) / 1048576.0, a->output);
    for (int t = 0; t < p->ntasks; t++)
        printf("  task %d: %.3f ms, %.0f line accesses\n", t, p->tasks[t].time_s * 1e3,
               pd_sim_task_accesses(p, t));
    pd_sim_profile_free(p);
    return 0;
}

static int sim_compress(sim_args *a)
{
    if (!a->profile || !a->output || !a->unit) {
        fprintf(stderr, "paddiser sim compress: needs --profile IN, --unit U and --output OUT\n");
        return 2;
    }
    char err[512] = "";
    pd_sim_profile *p = pd_sim_profile_load(a->profile, err, sizeof err), *q = NULL;
    if (p)
        q = pd_sim_profile_coarsen(p, a->unit, err, sizeof err);
    if (!q || pd_sim_profile_save(q, a->output, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser sim compress: %s\n", err);
        pd_sim_profile_free(p);
        pd_sim_profile_free(q);
        return 1;
    }
    printf("%s/%s: %zu pages of %zu B -> %zu units of %zu B; %.1f MiB -> %.1f MiB in memory; %s\n", q->workload,
           q->input, p->npages, p->page_bytes, q->npages, q->page_bytes, pd_sim_profile_bytes(p) / 1048576.0,
           pd_sim_profile_bytes(q) / 1048576.0, a->output);
    pd_sim_profile_free(p);
    pd_sim_profile_free(q);
    return 0;
}

static int write_metrics(const char *path, const sim_args *a, const pd_sim_profile *p,
                         const char *tier, double cap, pd_sim_policy pol, const pd_sim_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "workload", json_string(p->workload));
    json_object_set_new(o, "input", json_string(p->input));
    json_object_set_new(o, "tier", json_string(tier));
    json_object_set_new(o, "policy", json_string(pd_sim_policy_name(pol)));
    json_object_set_new(o, "capacity", json_real(cap));
    json_object_set_new(o, "makespan_s", json_real(res[pol].out.makespan));
    json_object_set_new(o, "cov", json_real(res[pol].out.cov));
    json_object_set_new(o, "mean_task_s", json_real(res[pol].out.mean));
    json_object_set_new(o, "predicted_makespan_s", json_real(res[pol].place.predicted_makespan));
    json_object_set_new(o, "fast_bytes", json_integer((json_int_t)res[pol].place.fast_bytes));
    for (int k = 0; k < PD_SIM_NPOLICIES; k++) {
        char key[64], name[32];
        snprintf(name, sizeof name, "%s", pd_sim_policy_name((pd_sim_policy)k));
        for (char *c = name; *c; c++)
            if (*c == '-')
                *c = '_';
        snprintf(key, sizeof key, "makespan_%s_s", name);
        json_object_set_new(o, key, json_real(res[k].out.makespan));
        snprintf(key, sizeof key, "cov_%s", name);
        json_object_set_new(o, key, json_real(res[k].out.cov));
        snprintf(key, sizeof key, "gain_vs_%s", name);
        json_object_set_new(o, key, json_real(pd_sim_gain(res[pol].out.makespan, res[k].out.makespan)));
    }
    (void)a;
    char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
    json_decref(o);
    int rc = text ? pd_write_file(path, text, strlen(text)) : -1;
    free(text);
    return rc;
}

static int sim_run(sim_args *a)
{
    if (set_defaults(a, "run", NULL, "base", "optane", "0.5") != 0)
        return 1;
    if (a->ncaps != 1 || a->tiers.n != 1) {
        fprintf(stderr, "paddiser sim run: give one --capacity and one --tier\n");
        return 2;
    }
    pd_sim_policy pol = PD_SIM_EXACT;
    if (a->policy && pd_sim_policy_parse(a->policy, &pol) != 0) {
        fprintf(stderr, "paddiser sim run: unknown policy '%s' (first-touch, hot-first, memory-mode, greedy, exact, hot-exact)\n", a->policy);
        return 2;
    }
    if (!a->profile && a->workloads.n != 1) {
        fprintf(stderr, "paddiser sim run: needs --profile FILE or one --workload\n");
        return 2;
    }
    char err[512] = "";
    pd_sim_profile *p = a->profile ? pd_sim_profile_load(a->profile, err, sizeof err)
                                   : pd_sim_get_profile(a->workloads.v[0], a->inputs.v[0],
                                                        a->profile_dir, a->refresh, a->reps ? a->reps : 3, err, sizeof err);
    if (!p) {
        fprintf(stderr, "paddiser sim run: %s\n", err);
        return 1;
    }
    pd_sim_machine m;
    pd_sim_machine_preset(a->tiers.v[0], &m);
    pd_sim_result res[PD_SIM_NPOLICIES];
    if (pd_sim_compare(&m, p, a->caps[0], &a->opts, res, err, sizeof err) != 0) {
        fprintf(stderr, "paddiser sim run: %s\n", err);
        pd_sim_profile_free(p);
        return 1;
    }
    printf("%s/%s on %s, fast memory %.0f%% of %.1f MiB\n", p->workload, p->input, m.name,
           a->caps[0] * 100, pd_sim_footprint(p) / 1048576.0);
    printf("%-12s %12s %8s %10s  gain of %s\n", "policy", "makespan_ms", "cov", "fast_MiB",
           pd_sim_policy_name(pol));
    for (int k = 0; k < PD_SIM_NPOLICIES; k++)
        printf("%-12s %12.3f %8.3f %10.2f %11.1f%%\n", pd_sim_policy_name((pd_sim_policy)k),
               res[k].out.makespan * 1e3, res[k].out.cov, res[k].place.fast_bytes / 1048576.0,
               100 * pd_sim_gain(res[pol].out.makespan, res[k].out.makespan));
    int rc = 0;
    if (a->metrics && write_metrics(a->metrics, a, p, m.name, a->caps[0], pol, res) != 0) {
        fprintf(stderr, "paddiser sim run: cannot write %s: %s\n", a->metrics, strerror(errno));
        rc = 1;
    }
    if (a->tasks_csv) {
        FILE *f = fopen(a->tasks_csv, "w");
        if (!f) {
            fprintf(stderr, "paddiser sim run: cannot write %s: %s\n", a->tasks_csv, strerror(errno));
            rc = 1;
        } else {
            pd_sim_tasks_csv(f, p, res, 1);
            int bad = ferror(f);
            if ((fclose(f) != 0) | bad) {
                fprintf(stderr, "paddiser sim run: cannot write %s\n", a->tasks_csv);
                rc = 1;
            }
        }
    }
    pd_sim_results_free(res);
    pd_sim_profile_free(p);
    return rc;
}

static int sim_study(sim_args *a)
{
    if (a->quick ? set_defaults(a, "study", ALL_WORKLOADS, "base", "optane", "0.2,0.5,0.8")
                 : set_defaults(a, "study", ALL_WORKLOADS, "base,in1,in2,in3", "optane,cxl,cxl-slow",
                                "0.1:0.9:0.2"))
        return 1;
    pd_str cmd = {0};
    pd_str_append(&cmd, "paddiser sim study");
    for (int k = 1; k < a->argc; k++)
        pd_str_printf(&cmd, " %s", a->argv[k]);
    pd_sim_study_cfg cfg = {
        .workloads = (const char **)a->workloads.v, .nworkloads = a->workloads.n,
        .inputs = (const char **)a->inputs.v, .ninputs = a->inputs.n,
        .tiers = (const char **)a->tiers.v, .ntiers = a->tiers.n,
        .caps = a->caps, .ncaps = a->ncaps,
        .profile_dir = a->profile_dir, .refresh = a->refresh, .reps = a->reps ? a->reps : a->quick ? 1 : 3,
        .repeats = a->repeats ? a->repeats : a->quick ? 1 : 5,
        .md_path = a->output, .csv_path = a->csv, .command = cmd.data,
        .verbose = a->verbose || isatty(STDERR_FILENO), /* a terminal sees progress */
        .migrate_gbs = a->migrate_gbs,
    };
    char err[512] = "";
    int rc = pd_sim_study(&cfg, err, sizeof err);
    pd_str_free(&cmd);
    if (rc != 0) {
        fprintf(stderr, "paddiser sim study: %s\n", err);
        return 1;
    }
    if (a->output)
        printf("wrote %s\n", a->output);
    if (a->csv)
        printf("wrote %s\n", a->csv);
    return 0;
}

/* Runs one case per workload and input; a failing case is reported and the
 * others still run. */
static int each_case(const sim_args *a, const char *sub,
                     int (*run_case)(const sim_args *a, const pd_workload *w, const char *input,
                                     char *err, size_t errlen))
{
    int rc = 0;
    for (int w = 0; w < a->workloads.n; w++)
        for (int i = 0; i < a->inputs.n; i++) {
            char err[512] = "";
            const pd_workload *wl = pd_workload_find(a->workloads.v[w]);
            if (run_case(a, wl, a->inputs.v[i], err, sizeof err) != 0) {
                fprintf(stderr, "paddiser sim %s: %s/%s: %s\n", sub, wl->name, a->inputs.v[i], err);
                rc = 1;
            }
        }
    return rc;
}

static int verify_case(const sim_args *a, const pd_workload *w, const char *input, char *err,
                       size_t errlen)
{
    if (pd_wl_verify(w, input, err, errlen) != 0)
        return -1;
    printf("%s/%s: ok\n", w->name, input);
    return 0;
}

static int sim_verify(sim_args *a)
{
    if (set_defaults(a, "verify", ALL_WORKLOADS, "base", NULL, NULL) != 0)
        return 1;
    return each_case(a, "verify", verify_case);
}

static int sampling_case(const sim_args *a, const pd_workload *w, const char *input, char *err,
                         size_t errlen)
{
    pd_wl_sampling s;
    if (pd_wl_sampling_check(w, input, &s, err, errlen) != 0)
        return -1;
    printf("%s/%s: %zu sampled pages, %llu sampled faults; task-share distance "
           "(total variation, 0 = same shares) over all objects %.3f\n",
           w->name, input, s.samples, s.faults, s.tv);
    printf("  %-10s %14s %14s %8s\n", "object", "exact_lines", "sampled", "tv");
    for (int o = 0; o < s.nobjects; o++) {
        double e = 0, smp = 0;
        for (int t = 0; t < s.ntasks; t++)
            e += s.exact[o * s.ntasks + t], smp += s.sampled[o * s.ntasks + t];
        printf("  %-10s %14.0f %14.0f %8.3f\n", s.names[o] ? s.names[o] : "?", e, smp, s.obj_tv[o]);
    }
    pd_wl_sampling_free(&s);
    return 0;
}

static int sim_sampling(sim_args *a)
{
    if (set_defaults(a, "sampling", ALL_WORKLOADS, "base", NULL, NULL) != 0)
        return 1;
    return each_case(a, "sampling", sampling_case);
}

/* The exact-planner run's decision in a word: "moved N" (pages), "hot-first N"
 * (hot-first's set replaced the plan, N pages moved), "kept" (the
 * gain-versus-cost rule kept the placement) or "same" (the plan was the
 * placement already). */
static void decision_word(const pd_wl_runtime_decision *d, char *buf, size_t len)
{
    if (!d->decided)
        snprintf(buf, len, "same");
    else if (d->kept)
        snprintf(buf, len, "kept");
    else
        snprintf(buf, len, "%s %zu", d->hot_first ? "hot-first" : "moved", d->pages_moved);
}

static int runtime_case(const sim_args *a, const pd_workload *w, const char *input, char *err,
                        size_t errlen)
{
    pd_sim_machine m;
    pd_score_machine sm;
    pd_sim_machine_preset(a->tiers.v[0], &m);
    pd_score_machine_preset(a->tiers.v[0], &sm);
    if (a->migrate_gbs > 0)
        sm.migrate_gbs = a->migrate_gbs;
    pd_sim_profile *p = pd_sim_get_profile(w->name, input, a->profile_dir, a->refresh,
                                           a->reps ? a->reps : 3, err, errlen);
    double *fast = p ? malloc(p->npages * sizeof *fast) : NULL;
    int rc = p && fast ? 0 : -1;
    if (p && !fast)
        snprintf(err, errlen, "out of memory");
    /* As the study does: the sim backend's moves cost nothing, so tell the
     * runtime what the scorer charges, in its own time; without it, its
     * first move was weighed at the 1 GB/s prior and later ones at the sim
     * backend's free rate, and the same case kept first touch in some runs
     * and moved in others (docs/runtime.md). A value the user set is kept. */
    int set_bw = p && !getenv("PADDISER_MIGRATE_BW");
    if (set_bw)
        pd_score_tell_runtime_migrate_bw(&sm, p);
    for (int c = 0; rc == 0 && c < a->ncaps; c++) {
        pd_sim_result res[PD_SIM_NPOLICIES];
        double rt[2], pred = 0;
        pd_wl_runtime_decision dec;
        char word[32];
        if (pd_sim_compare(&m, p, a->caps[c], &a->opts, res, err, errlen) != 0) {
            rc = -1;
            break;
        }
        size_t cap = (size_t)(a->caps[c] * (double)pd_sim_footprint(p));
        for (int q = 0; rc == 0 && q < 2; q++)
            rc = pd_sim_runtime_makespan(&m, p, cap, q ? PD_PLANNER_GREEDY : PD_PLANNER_EXACT, fast,
                                         &rt[q], q ? NULL : &pred, q ? NULL : &dec, err, errlen);
        if (rc == 0) {
            decision_word(&dec, word, sizeof word);
            printf("%-8s %-6s %4.0f%% %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f  %s\n", p->workload,
                   p->input, 100 * a->caps[c], rt[0] * 1e3, rt[1] * 1e3, pred * 1e3,
                   res[PD_SIM_EXACT].out.makespan * 1e3, res[PD_SIM_HOT_FIRST].out.makespan * 1e3,
                   res[PD_SIM_MEMORY_MODE].out.makespan * 1e3, word);
        }
        pd_sim_results_free(res);
    }
    if (set_bw)
        unsetenv("PADDISER_MIGRATE_BW");
    free(fast);
    pd_sim_profile_free(p);
    return rc;
}

static int sim_runtime(sim_args *a)
{
    if (set_defaults(a, "runtime", ALL_WORKLOADS, "base", "optane", "0.1,0.3,0.5,0.7") != 0)
        return 1;
    printf("%-8s %-6s %5s %10s %10s %10s %10s %10s %10s  %s\n", "workload", "input", "cap",
           "rt-exact", "rt-greedy", "rt-pred", "sim-exact", "hot-first", "mem-mode", "rt-exact-decision");
    int rc = each_case(a, "runtime", runtime_case);
    if (rc == 0)
        printf("(ms of the execution model; rt-* = libpaddiser's placement with the sim backend, its moves\n"
               " weighed at the study's migration throughput; rt-pred = the runtime's own predicted makespan,\n"
               " on this machine's measured times; rt-exact-decision = what the exact-planner run decided at\n"
               " its sync point: moved N pages, hot-first N (hot-first's set replaced the plan), kept (the\n"
               " gain-versus-cost rule left the pages where first touch put them), same (the plan was the\n"
               " placement already))\n");
    return rc;
}

static int sim_gen_training(sim_args *a)
{
    if (!a->output) {
        fprintf(stderr, "paddiser sim gen-training: needs --output FILE\n");
        return 2;
    }
    if (set_defaults(a, "gen-training", ALL_WORKLOADS, "base,in1,in2,in3", "optane", NULL) != 0)
        return 1;
    int np = a->workloads.n * a->inputs.n, rc = 0;
    pd_sim_profile **profs = calloc((size_t)np, sizeof *profs);
    char err[512] = "";
    if (!profs) {
        fprintf(stderr, "paddiser sim gen-training: out of memory\n");
        return 1;
    }
    for (int w = 0; w < a->workloads.n && rc == 0; w++)
        for (int i = 0; i < a->inputs.n && rc == 0; i++) {
            profs[w * a->inputs.n + i] = pd_sim_get_profile(a->workloads.v[w], a->inputs.v[i],
                                                            a->profile_dir, a->refresh,
                                                            a->reps ? a->reps : 3, err, sizeof err);
            if (!profs[w * a->inputs.n + i])
                rc = 1;
        }
    pd_sim_machine m;
    pd_sim_machine_preset(a->tiers.v[0], &m);
    pd_sim_training_stats st = {0};
    if (rc == 0 && pd_sim_gen_training(&m, profs, np, a->placements ? a->placements : 10,
                                       a->opts.seed, a->output, &st, err, sizeof err) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "paddiser sim gen-training: %s\n", err);
    else
        printf("wrote %s: %zu rows; Eq. 2 with f = 1 (linear in r) vs the execution model: "
               "mean abs. error %.1f%%, max %.1f%%\n",
               a->output, st.rows, 100 * st.linear_mape, 100 * st.linear_max);
    for (int k = 0; k < np; k++)
        pd_sim_profile_free(profs[k]);
    free(profs);
    return rc;
}

#define O_PROFILES OPT_PROFILE_DIR, OPT_REFRESH, 'r'
#define O_PLANNER OPT_SEED, OPT_STEP, OPT_ROUNDS

static const sim_sub sim_subs[] = {
    {"tiers", sim_tiers, help_tiers, {0}},
    {"profile", sim_profile, help_profile, {'w', 'i', 'o', 'r', OPT_UNIT}},
    {"compress", sim_compress, help_compress, {'p', 'o', OPT_UNIT}},
    {"run", sim_run, help_run, {'w', 'i', 'p', 't', 'c', 'P', OPT_METRICS, OPT_TASKS_CSV, O_PROFILES, O_PLANNER}},
    {"study", sim_study, help_study,
     {'w', 'i', 't', 'c', 'o', OPT_CSV, OPT_QUICK, OPT_REPEATS, OPT_MIGRATE_GBS, 'v', O_PROFILES}},
    {"gen-training", sim_gen_training, help_gen_training, {'w', 'i', 't', 'o', 'n', OPT_SEED, O_PROFILES}},
    {"verify", sim_verify, help_verify, {'w', 'i'}},
    {"sampling", sim_sampling, help_sampling, {'w', 'i'}},
    {"runtime", sim_runtime, help_runtime, {'w', 'i', 't', 'c', OPT_MIGRATE_GBS, O_PROFILES, O_PLANNER}},
};

int cmd_sim(int argc, char **argv)
{
    int before = pd_opt_before_subcommand("paddiser sim", argc, argv, usage);
    if (before >= 0)
        return before;
    const sim_sub *sub = NULL;
    for (size_t k = 0; k < PD_ARRAY_LEN(sim_subs) && !sub; k++)
        if (!strcmp(argv[optind], sim_subs[k].name))
            sub = &sim_subs[k];
    if (!sub) {
        fprintf(stderr, "paddiser sim: unknown subcommand '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    char cmd[64];
    snprintf(cmd, sizeof cmd, "paddiser sim %s", sub->name);
    sim_args a = {.profile_dir = DEFAULT_PROFILE_DIR, .opts = {.seed = 1, .rounds = 3},
                  .cmd = cmd, .argc = argc - optind, .argv = argv + optind};
    int rc = parse_args(sub, a.argc, a.argv, &a);
    if (rc < 0) { /* neither --help nor a usage error */
        rc = check_names(&a);
        if (rc == 0)
            rc = sub->run(&a);
    }
    args_free(&a);
    return rc;
}
