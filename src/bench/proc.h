/* Child processes for the bench executors: run a command and capture its
 * output, and the signal plumbing that lets Ctrl-C cancel a run cleanly
 * (SIGINT/SIGTERM/SIGCHLD are blocked in paddiser and waited for with
 * sigtimedwait; children get a clean mask and default handlers). */
#ifndef PD_BENCH_PROC_H
#define PD_BENCH_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

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

/* Runs argv[0] (searched on PATH) with stdin from /dev/null and returns its
 * exit status (128+N if killed by signal N), capturing stdout into out and
 * stderr into errout (either may be NULL: discarded). -1 with err when it
 * could not be started. */
int pd_proc_run(char *const argv[], pd_str *out, pd_str *errout, char *err, size_t errlen);

#endif
