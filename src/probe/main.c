/* paddiser-probe: the CPU/memory, GPU and I/O samplers (src/probe/run.c). */
#include "probe/probe.h"

int main(int argc, char **argv) { return pd_probe_main(argc, argv); }
