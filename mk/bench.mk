# paddiser bench: the membw example kernel and the real-SLURM integration
# test (a throwaway single-node SLURM on localhost, see
# scripts/slurm-localhost.sh). `make check` runs check-slurm via CHECK_EXTRA.

MEMBW_BIN := $(BUILD)/membw-triad
CHECK_SLURM_STUDY ?= examples/membw/membw.yaml

$(MEMBW_BIN): examples/membw/triad.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 $(WARNFLAGS) -fopenmp -o $@ $<

.PHONY: membw check-slurm
membw: $(MEMBW_BIN)

# Runs examples/membw/membw.yaml through a real single-node SLURM and checks
# every repetition ran as a SLURM job with its metrics, then that Ctrl-C
# scancels jobs in flight (tests/bench_slurm_real.sh). The daemons are
# stopped by PID whatever happens.
check-slurm: all $(MEMBW_BIN)
	@scripts/install-deps.sh slurm-wlm munge
	@PADDISER_CHECK_SLURM=1 BUILD=$(BUILD) MEMBW_BIN=$(abspath $(MEMBW_BIN)) \
		CHECK_SLURM_STUDY=$(abspath $(CHECK_SLURM_STUDY)) sh tests/bench_slurm_real.sh

CHECK_EXTRA += check-slurm
