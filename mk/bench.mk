# paddiser bench: the membw example kernel and the real-SLURM integration
# tests (a throwaway single-node SLURM on localhost, see
# scripts/slurm-localhost.sh, and a two-node one in namespaces, see
# scripts/slurm-netns.sh). `make check` runs check-slurm via CHECK_EXTRA.

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
# stopped by PID whatever happens. Then the multi-node test
# (tests/slurm_multinode.sh): a two-node SLURM whose nodes are network + UTS
# namespaces the test makes inside namespaces of its own
# (scripts/slurm-netns.sh), sampled through srun --overlap, and the OAR and
# PBS launch paths with stub oarsh/ssh; it skips where the kernel refuses
# the namespaces.
check-slurm: all $(MEMBW_BIN)
	@scripts/install-deps.sh slurm-wlm munge iproute2
	@PADDISER_CHECK_SLURM=1 BUILD=$(BUILD) MEMBW_BIN=$(abspath $(MEMBW_BIN)) \
		CHECK_SLURM_STUDY=$(abspath $(CHECK_SLURM_STUDY)) sh tests/bench_slurm_real.sh
	@PADDISER_CHECK_SLURM=1 BUILD=$(BUILD) sh tests/slurm_multinode.sh

CHECK_EXTRA += check-slurm

# Bayesian vs random search on test functions over discrete grids
# (bench/bayes_bench.c; not part of make check; docs/bench.md quotes it).
$(BUILD)/bench/bayes_bench: $(call OBJ,bench/bayes_bench.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench-bayes
bench-bayes: $(BUILD)/bench/bayes_bench
	$(BUILD)/bench/bayes_bench
-include $(BUILD)/obj/bench/bayes_bench.d
