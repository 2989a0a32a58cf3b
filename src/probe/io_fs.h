/* Parallel file systems as I/O sources (issue #18): where their counters are
 * and how to get them. Lustre: the client's llite stats file of the mounted
 * instance, a /proc (or debugfs) file read like diskstats (io_lustre.c).
 * GPFS: the fs_io_s answer of mmpmon, one mmpmon kept running for the whole
 * sampler and asked once per sample through a pipe (io_gpfs.c). The parsing
 * of their texts is declared in probe/sample.h. */
#ifndef PD_PROBE_IO_FS_H
#define PD_PROBE_IO_FS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/util.h"

/* ---- Lustre ---- */

/* File system name of a Lustre mount source ("10.0.0.1@tcp:/lfs1",
 * "a@o2ib:b@o2ib:/lfs1/sub"): what follows the last ":/" up to the next '/'.
 * False when source has no such name (or it does not fit). */
bool pd_lustre_fsname(const char *source, char *out, size_t len);

/* The llite instance of fsname: a directory <fsname>-<hex id> holding a
 * readable stats file, under <proc>/fs/lustre/llite (older clients) or
 * <sys>/kernel/debug/lustre/llite (newer ones, debugfs). Fills instance
 * and stats_path and returns true when exactly one instance is there;
 * otherwise false with why filled (none, unreadable, or several: the file
 * system is mounted more than once and the instance of a path is unknown). */
bool pd_lustre_instance(const char *fsname, char *instance, size_t ilen, char *stats_path, size_t plen,
                        pd_str *why);

/* ---- GPFS ---- */

/* File system name of a gpfs mount source ("gpfs1" or "/dev/gpfs1"). */
const char *pd_gpfs_fsname(const char *source);

/* The mmpmon to run: $PADDISER_MMPMON, else mmpmon on PATH, else
 * /usr/lpp/mmfs/bin/mmpmon (where GPFS installs it). False when none is an
 * executable file. */
bool pd_mmpmon_find(char *out, size_t len);

/* One `mmpmon -p -s` reading requests from a pipe for the whole sampler
 * (IBM documents this way of driving it: it keeps reading until end of file). */
typedef struct {
    pid_t pid;   /* 0: not running */
    int to_fd;   /* its stdin (a socket: a dead mmpmon gives EPIPE, not SIGPIPE) */
    int from_fd; /* its stdout */
    char *buf;   /* what it printed, up to the end of the last answer */
    size_t len, cap;
    bool warned; /* a failure was reported once */
} pd_mmpmon;

/* Starts mmpmon at path (stop signals unblocked in the child); false when it
 * cannot be started. */
bool pd_mmpmon_start(pd_mmpmon *m, const char *path);
/* Asks for fs_io_s and waits (at most timeout_s, in ppoll with wait_mask) for
 * the answer, closed by the answer to a `ver` request sent after it. Returns
 * the answer text (valid until the next call), or NULL after stopping mmpmon
 * when it died, hung, or printed too much. */
const char *pd_mmpmon_query(pd_mmpmon *m, double timeout_s, const sigset_t *wait_mask);
/* Ends mmpmon (end of file on its stdin, then SIGKILL if it lingers) and
 * frees the answer buffer; a no-op on a zeroed or stopped one. */
void pd_mmpmon_stop(pd_mmpmon *m);

#endif
