/* Child processes for the bench executors: run a command with a bounded
 * wait, and the signal plumbing that lets Ctrl-C cancel a run cleanly in
 * every phase (SIGINT/SIGTERM/SIGCHLD are blocked in paddiser and waited
 * for with sigtimedwait or polled; children get a clean mask and default
 * handlers, and lead their own process group so a stop reaches everything
 * they started). */
#ifndef PD_BENCH_PROC_H
#define PD_BENCH_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/util.h"

/* Seconds between SIGTERM and SIGKILL when a child is stopped. */
#define PD_PROC_GRACE_S 3.0

/* Blocks SIGINT, SIGTERM and SIGCHLD in the calling process (saving the old
 * mask for children). Call once before starting any work. */
void pd_proc_block_signals(void);
/* Restores what children should start with; call in a child after fork. */
void pd_proc_child_reset(void);
/* Waits up to timeout_s for a signal. Returns the signal (SIGINT, SIGTERM,
 * SIGCHLD), or 0 on timeout. Pending SIGINT/SIGTERM are sticky: once one was
 * seen, pd_proc_interrupted() is true. */
int pd_proc_wait_signal(double timeout_s);
bool pd_proc_interrupted(void);
/* Non-blocking check for a pending SIGINT/SIGTERM. */
bool pd_proc_poll_interrupt(void);
/* The exit status an interrupted harness ends with: 128 + the signal
 * (130 for SIGINT, 143 for SIGTERM). */
int pd_proc_interrupt_status(void);

/* Sends SIGTERM to the process group pid leads, waits up to
 * PD_PROC_GRACE_S for pid to end, then SIGKILLs the group, and reaps pid.
 * Returns pid's wait status. */
int pd_proc_stop_group(pid_t pid);

/* pd_proc_exec's results other than an exit status (>= 0; 128+N when the
 * child was killed by signal N). */
enum { PD_PROC_ERROR = -1, PD_PROC_TIMED_OUT = -2, PD_PROC_INTERRUPTED = -3 };

typedef struct {
    const char *cwd;      /* the child's working directory, or NULL */
    /* The child's stdout/stderr go to these files (created or truncated,
     * no link followed), else into out/errout (NULL: discarded). */
    const char *out_path, *err_path;
    pd_str *out, *errout;
    size_t max_capture;   /* bytes kept of a captured stream (0: all); the rest is read and dropped */
    double timeout_s;     /* <= 0: no bound */
    bool uninterruptible; /* ignores SIGINT/SIGTERM (scancel while cancelling) */
} pd_proc_opts;

/* Runs argv[0] (searched on PATH) with stdin from /dev/null as the leader
 * of its own process group, and waits for it. When it ends, whatever it
 * left running in its group is killed. Past timeout_s, or on SIGINT/SIGTERM,
 * the group is stopped (pd_proc_stop_group) and PD_PROC_TIMED_OUT or
 * PD_PROC_INTERRUPTED is returned with err saying so; PD_PROC_ERROR with
 * err when it could not be started. */
int pd_proc_exec(char *const argv[], const pd_proc_opts *o, char *err, size_t errlen);

/* Runs fn(arg) in a forked child (its own process group, default signal
 * handling) and waits for it as pd_proc_exec does: fn's return value as the
 * exit status, or PD_PROC_INTERRUPTED / PD_PROC_ERROR. For long in-process
 * work (the run summary, the report) that must stay interruptible. */
int pd_proc_call(int (*fn)(void *), void *arg, char *err, size_t errlen);

#endif
