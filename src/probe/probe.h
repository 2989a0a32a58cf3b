/* paddiser-probe command line (src/probe/main.c is a one-line wrapper so the
 * unit tests can run the whole command in-process). */
#ifndef PD_PROBE_PROBE_H
#define PD_PROBE_PROBE_H

/* paddiser-probe cpu|gpu|io|resolve|block [options], --help, --version;
 * see the usage texts in run.c and docs/probe.md. Returns the process exit
 * status: 0 (including "nothing to sample"), 1 runtime failure, 2 usage
 * error. */
int pd_probe_main(int argc, char **argv);

#endif
