/* Study configuration of `paddiser bench`: the IOPS YAML schema, parsed with
 * libyaml. Every error names the file, line and key path
 * ("study.yaml:12: benchmark.probes.io_paths: required when io_sampling is
 * true"); loading collects all of them so one run shows every mistake. */
#ifndef PD_BENCH_CONFIG_H
#define PD_BENCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/expr.h"
#include "common/util.h"

typedef enum { PD_VT_INT, PD_VT_FLOAT, PD_VT_STR, PD_VT_BOOL, PD_VT_LIST } pd_var_type;
typedef enum { PD_SEARCH_EXHAUSTIVE, PD_SEARCH_RANDOM, PD_SEARCH_BAYESIAN, PD_SEARCH_ADAPTIVE } pd_search_method;
typedef enum { PD_EXEC_LOCAL, PD_EXEC_SLURM } pd_executor_kind;
typedef enum { PD_POLICY_SKIP, PD_POLICY_ERROR, PD_POLICY_WARN } pd_violation_policy;
typedef enum { PD_SINK_CSV, PD_SINK_SQLITE } pd_sink_type;

/* A text taken from the config, with where it came from so that errors
 * found when it is evaluated can point at the config line. */
typedef struct {
    char *text;
    int line;     /* config line of the text's first line (1-based) */
    char *key;    /* key path, e.g. "vars.block.expr" */
} pd_cfg_text;

/* vars.X.adaptive (IOPS 3.5.8's AdaptiveConfig): a value probed from
 * `initial` stepping by factor, increment or step_expr until stop_when
 * holds. */
typedef struct {
    bool set;
    int line;
    pd_val initial;        /* cast to the variable's type */
    pd_val initial_as_written; /* the YAML scalar (IOPS's run metadata records it so: 8, not 8.0) */
    bool has_factor, has_increment;
    double factor, increment;
    pd_cfg_text step_expr; /* text NULL unless given */
    pd_cfg_text stop_when;
    long max_iterations;   /* 0: no limit */
    bool descending;
} pd_bench_adaptive;

typedef struct {
    char *name;
    pd_var_type type;
    int line;
    pd_val *values; /* swept values (already cast to type); NULL for derived */
    size_t nvalues;
    pd_cfg_text expr; /* derived variables: expr.text != NULL */
    pd_cfg_text when; /* conditional swept variables: when.text != NULL */
    pd_val when_default; /* the value when `when` is false (cast to type) */
    pd_bench_adaptive adaptive; /* adaptive variables: adaptive.set */
} pd_bench_var;

typedef struct {
    char *name;
    pd_cfg_text rule;
    pd_violation_policy policy;
} pd_bench_constraint;

typedef struct {
    char *name;
    pd_cfg_text script_template;
    bool has_parser;
    pd_cfg_text parser_file;
    char **metrics;
    size_t nmetrics;
    char *parser_script; /* Python source (inline or read from the named file), or NULL */
    pd_cfg_text post;    /* post.script (post_<name>.sh, run after a successful script), or text NULL */
    struct pd_bench_input {
        char *name;
        pd_cfg_text path;     /* template of the destination */
        pd_cfg_text template; /* content template (inline, or read from `file`) */
        int mode;             /* chmod bits, or -1 */
    } *inputs;                /* scripts[].inputs: files written next to the script */
    size_t ninputs;
} pd_bench_script;

typedef struct {
    char *path;       /* the config file as given */
    char *name;
    char *description;
    char *workdir;    /* absolute */
    int repetitions;
    int parallel;
    pd_executor_kind executor;
    double poll_interval_s; /* benchmark.slurm_options.poll_interval (default 1) */
    double timeout_s;       /* benchmark.timeout: bound of a script, its post script, its parser (0: none) */
    double slurm_command_timeout_s; /* benchmark.slurm_options.command_timeout: sbatch, squeue, ... (default 60) */
    struct { /* benchmark.slurm_options.commands and .allocation (IOPS 3.5.8's keys; slurm.h) */
        /* command templates, {job_id} replaced by the job's id; NULL: the built-in ones */
        char *submit, *status, *info, *cancel;
        bool single;             /* allocation.mode: single (one allocation runs every repetition) */
        char *allocation_script; /* allocation.allocation_script: its #SBATCH lines and setup commands */
        double test_timeout_s;   /* allocation.test_timeout; 0: not given */
    } slurm;
    struct {
        bool cpu, gpu, io;
        double interval_s;
        pd_cfg_text *io_paths;
        size_t n_io_paths;
        int line; /* of benchmark.probes */
    } probes;
    pd_bench_var *vars;
    size_t nvars;
    pd_bench_constraint *constraints;
    size_t nconstraints;
    pd_cfg_text command;
    pd_cfg_text *env;  /* command.env values (templates), names in env_names */
    char **env_names;
    size_t nenv;
    char **label_names, **label_values; /* command.labels */
    size_t nlabels;
    pd_bench_script script;          /* scripts[0] */
    pd_bench_script *extra_scripts;  /* scripts[1..]: each combination runs every script (own execution id) */
    size_t nextra_scripts;
    char **metrics;                  /* union of every script's metrics, in order: results.csv columns */
    size_t nmetrics;
    pd_cfg_text sink_path; /* text NULL: run_dir/results.csv */
    int sink_overwrite;    /* output.sink.mode overwrite: the sink holds this run's rows only */
    pd_sink_type sink_type; /* output.sink.type: csv (default) or sqlite (sink_sqlite.h) */
    char *sink_table;       /* output.sink.table (sqlite; default "results") */
    char *cache_file;       /* benchmark.cache_file, absolute (cache.h), or NULL */
    char **cache_exclude_vars; /* benchmark.cache_exclude_vars: left out of the cache key */
    size_t ncache_exclude_vars;
    /* benchmark.exhaustive_vars: swept fully for every point random or
     * bayesian search picks among the other variables (study.h) */
    char **exhaustive_vars;
    size_t nexhaustive_vars;
    int exhaustive_line;
    double max_core_hours;  /* benchmark.max_core_hours (budget.h); 0: no budget */
    pd_cfg_text cores_expr; /* benchmark.cores_expr (template); text NULL: 1 core */
    double estimated_time_s; /* benchmark.estimated_time_seconds; 0: not set */
    char *machine;          /* the machines: entry merged in (pd_bench_config_load_machine), or NULL */
    pd_search_method search;
    int search_line;        /* config line of benchmark.search_method, 0 if not given */
    struct {
        long n_samples;      /* 0: use percentage */
        double percentage;   /* 0 < p <= 1 */
        bool fallback_to_exhaustive;
        long seed;           /* benchmark.random_seed (default 42) */
        int line;
    } random;
    struct { /* benchmark.bayesian_config (IOPS's keys and defaults; bayes_plan.h) */
        char *objective_metric;
        bool maximize;             /* objective: maximize (default minimize) */
        long n_iterations;         /* search points to evaluate (default 20) */
        long n_initial_points;     /* random ones first (default 5) */
        int acquisition;           /* pd_bayes_acq: EI (default), PI, LCB */
        double xi, kappa;          /* 0.01, 1.96 */
        bool fallback_to_exhaustive; /* n_iterations >= the points: run them all (default true) */
        int line;
    } bayes;
} pd_bench_config;

/* Loads path. Relative workdir resolves against the current directory;
 * script_template / parser_script files against the config's directory.
 * Returns 0, or -1 with one "file:line: key: message" line per problem in
 * errors. Warnings (ignored IOPS keys) go to warnings either way. */
int pd_bench_config_load(const char *path, pd_bench_config *cfg, pd_str *errors, pd_str *warnings);
/* Same from text; name is used in messages, dir resolves relative files. */
int pd_bench_config_parse(const char *text, const char *name, const char *dir, pd_bench_config *cfg,
                          pd_str *errors, pd_str *warnings);
void pd_bench_config_free(pd_bench_config *cfg);

/* The same with a machines: entry merged in first, as IOPS's --machine NAME
 * does (machine NULL: none). Dicts merge recursively, lists of named items
 * (scripts, constraints, parser.metrics) by name, other lists and scalars
 * are replaced; a variable given sweep, expr or adaptive loses the others.
 * resolved (may be NULL) gets the merged study as YAML, without machines:. */
int pd_bench_config_load_machine(const char *path, const char *machine, pd_bench_config *cfg, pd_str *errors,
                                 pd_str *warnings, pd_str *resolved);
int pd_bench_config_parse_machine(const char *text, const char *name, const char *dir, const char *machine,
                                  pd_bench_config *cfg, pd_str *errors, pd_str *warnings, pd_str *resolved);

/* Scripts: 1 + nextra_scripts of them; index 0 is cfg->script. */
size_t pd_bench_nscripts(const pd_bench_config *cfg);
const pd_bench_script *pd_bench_script_at(const pd_bench_config *cfg, size_t i);

const char *pd_var_type_name(pd_var_type t);
/* Casts v to type t (e.g. the string "8" to int 8). 0, or -1 with err. */
int pd_val_cast(const pd_val *v, pd_var_type t, pd_val *out, char *err, size_t errlen);

#endif
