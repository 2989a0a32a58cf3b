/* The execution matrix of a study, numbered as IOPS 3.5.8 numbers it
 * (cartesian product of swept variables in config order, the last varying
 * fastest; with conditional variables (when:), IOPS's dependency order and
 * expansion, duplicates dropped; constraints that name no derived variable
 * filter before numbering, the others after; each combination runs every
 * script, each as its own execution; search_method random keeps IOPS's
 * random.sample of the executions with their numbers), the order IOPS runs
 * the repetitions in (pyrandom.h) and the per-repetition rendering of its
 * templates. Everything that can be
 * wrong with a study is found here, before anything runs. */
#ifndef PD_BENCH_STUDY_H
#define PD_BENCH_STUDY_H

#include <stddef.h>

#include "bench/config.h"

typedef struct {
    int id;          /* 1-based: exec_%04d */
    pd_val *values;  /* one per cfg->vars, derived ones evaluated for repetition 1 */
    size_t script;   /* index of the script it runs (pd_bench_script_at) */
} pd_bench_exec;

/* One run: a repetition (1-based) of execs[exec]. */
typedef struct {
    size_t exec;
    int repetition;
} pd_bench_attempt;

typedef struct {
    pd_bench_exec *execs; /* in number order */
    size_t nexecs;
    size_t nvars;
    /* every repetition of every execution, in IOPS's run order for
     * benchmark.random_seed: nexecs * repetitions of them */
    pd_bench_attempt *order;
    size_t norder;
    /* the order IOPS lists variables in its files (__iops_params.json, the
     * index, its results): cfg indices, nvars of them. Config order, but for
     * a study with conditional variables IOPS's expansion order of the swept
     * ones (its Kahn sort) followed by the derived ones. */
    size_t *var_order;
} pd_bench_matrix;

/* Builds the matrix. run_dir is the directory the run will use (it need not
 * exist yet). 0, or -1 with "file:line: key: message" lines in errors. */
int pd_bench_matrix_build(const pd_bench_config *cfg, const char *run_dir, pd_bench_matrix *m, pd_str *errors,
                          pd_str *warnings);
void pd_bench_matrix_free(pd_bench_matrix *m);

/* search_method adaptive: values (an execution's, its adaptive variable set
 * to the probed value) get their derived variables again and meet every
 * constraint, those naming the adaptive variable included. 1 to run, 0 when
 * a constraint skips it, -1 on an error (in errors). */
int pd_bench_probe_values(const pd_bench_config *cfg, const char *run_dir, int id, pd_val *values, pd_str *errors,
                          pd_str *warnings);

/* One repetition, ready to run. */
typedef struct {
    pd_val *values;    /* variables as seen by this repetition */
    char *command;     /* rendered command.template */
    char *script;      /* run_<script>.sh contents, probe block included */
    char *parser_file; /* rendered parser.file (absolute), or NULL */
    char *post;        /* rendered post.script, or NULL */
    char **input_paths, **input_texts; /* scripts[].inputs: absolute path and content */
    int *input_modes;  /* chmod bits or -1 */
    size_t ninputs;
    char *parser_context; /* JSON globals for a parser_script (vars, env, execution_id, ...) */
} pd_bench_rendered;

/* probe_bin: path of paddiser-probe (used when a probe is enabled). */
int pd_bench_render(const pd_bench_config *cfg, const char *run_dir, const pd_bench_exec *ex, int repetition,
                    const char *probe_bin, pd_bench_rendered *out, pd_str *errors);
void pd_bench_rendered_free(pd_bench_rendered *r, size_t nvars);

/* Rendered output.sink.path (NULL when not configured or on error; errors
 * says which). */
char *pd_bench_sink_path(const pd_bench_config *cfg, const char *run_dir, pd_str *errors);

/* Inserts block after the shebang and leading #SBATCH lines of script (a
 * shebang #!/bin/bash is added when missing). Returns a new string. */
char *pd_bench_insert_block(const char *script, const char *block);

/* Directory names: run_dir/exec_NNNN and run_dir/exec_NNNN/repetition_NNN. */
void pd_bench_exec_dir(char *buf, size_t len, const char *run_dir, int exec_id);
void pd_bench_rep_dir(char *buf, size_t len, const char *run_dir, int exec_id, int repetition);

#endif
