/* The SLURM command layer both SLURM executors share (exec_slurm.c: one job
 * per repetition; slurm_alloc.c: one allocation for them all): running a
 * command bounded by slurm_options.command_timeout, IOPS's command templates
 * (slurm_options.commands, "{job_id}" replaced), reading a job id, a job's
 * queue state and its final state, and cancelling it. */
#ifndef PD_BENCH_SLURM_H
#define PD_BENCH_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/run.h"

/* The built-in commands, IOPS 3.5.8's defaults (what the docs show). */
#define PD_SLURM_DEFAULT_SUBMIT "sbatch"

/* Splits a command template into words as Python's shlex.split does
 * (whitespace, '...', "..." with \\ \" \$ \` escapes, \x outside quotes; no
 * comments), then replaces "{job_id}" in each word with job_id (NULL: left
 * as is). A NULL-terminated heap argv (pd_free_argv), or NULL with err set
 * (unclosed quote, trailing backslash, no words, out of memory). */
char **pd_slurm_words(const char *tmpl, const char *job_id, char *err, size_t errlen);

enum {
    PD_SLURM_CALLER_SAYS_WHY = 1, /* the caller reports a timeout itself */
    PD_SLURM_CANCELLING = 2       /* a cancel after Ctrl-C: not stopped by that Ctrl-C */
};
/* Runs a SLURM command bounded by slurm_options.command_timeout (pd_proc_exec's
 * result); a hung one is stopped and named on stderr unless the caller says why. */
int pd_slurm_exec(const pd_bench_run *run, char *const argv[], const char *cwd, pd_str *out, pd_str *errout,
                  int flags, char *err, size_t errlen);

/* The submit command: slurm_options.commands.submit's words (default
 * sbatch), then args[0..nargs) (heap strings, taken over; a NULL among them
 * is one that could not be made). A NULL-terminated heap argv, or NULL with
 * err set (out of memory, or a template that does not split). */
char **pd_slurm_submit_command(const pd_bench_run *run, char **args, size_t nargs, char *err, size_t errlen);

/* Runs a submit command (argv, taken over) in cwd and reads the job id it
 * prints into job: 0, or -1 said on stderr as "paddiser bench: CMD failed
 * for WHAT: why". */
int pd_slurm_submit(const pd_bench_run *run, char **argv, const char *cwd, const char *what, char *job,
                    size_t joblen);

/* The job id in a submit command's stdout: "N", "N;cluster" (--parsable),
 * "Submitted batch job N[ on cluster C]", or a last word of digits, as IOPS
 * reads it. False when there is none. */
bool pd_slurm_parse_job_id(const char *out, char *id, size_t idlen);

/* One job's queue state through slurm_options.commands.status (its first
 * line's first word), or the built-in `squeue -h -o "%i %T" -j ID`: 1 when
 * listed (state set), 0 when not listed (or "Invalid job id"), -1 when the
 * command failed (why in err). */
int pd_slurm_queue_state(const pd_bench_run *run, const char *job_id, char *state, size_t len, char *err,
                         size_t errlen);

/* The final state of a job that left the queue: sacct, then
 * slurm_options.commands.info (default `scontrol -o show job ID`; its
 * JobState= and ExitCode= words). 0 when known (PENDING when not finished
 * after all), -1 when neither knows the job. raw: SLURM's state word. */
int pd_slurm_final_state(const pd_bench_run *run, const char *job_id, pd_task_state *state, int *exit_code, char *raw,
                         size_t rawlen);

/* slurm_options.commands.cancel (default `scancel ID`); says on stderr when
 * it failed. cancelling: after Ctrl-C (the command ignores that signal). */
int pd_slurm_cancel(const pd_bench_run *run, const char *job_id, bool cancelling);

/* slurm_options.allocation.mode single: one sbatch of run_dir/__iops_kickoff.sh
 * runs every pending repetition in turn inside the allocation (slurm_alloc.c).
 * Returns as pd_exec_slurm. */
int pd_exec_slurm_single(pd_bench_run *run, double poll_interval_s);

#endif
