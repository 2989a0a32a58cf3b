/* paddiser-probe start and stop, the commands the injected block runs at the
 * start and at the exit of a run script (control.c), and what they share with
 * the samplers' command line (run.c). */
#ifndef PD_PROBE_CONTROL_H
#define PD_PROBE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

/* The fd of the samplers' shared pipe (read end; the write end is the next
 * one) that the injected block's exit handler reads through /proc/PID/fd to
 * wait for this node's samplers without a process of its own. */
#define PD_PROBE_WAIT_FD 100

/* In a sampler that `start` forked: the write end of the pipe `start` waits
 * on before it returns, closed once the sampler has its baseline sample (so
 * the run script's work begins after it, and the closing sample spans the
 * whole run). -1 elsewhere (a sampler run from a wrapper on another node). */
extern int pd_probe_ready_fd;

/* argv[0] is the subcommand; return the exit status (0, or 2 for a usage error). */
int pd_probe_start(int argc, char **argv);
int pd_probe_stop(int argc, char **argv);

/* 1..max characters of A-Z a-z 0-9 . _ - + @ : = (attempt ids, host names). */
bool pd_probe_name_ok(const char *s, size_t max);

#endif
