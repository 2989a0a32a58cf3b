# The runtime on a realistic workload (issue #11): examples/runtime/phases
# (built by runtime-examples, mk/runtime.mk) measured by bench/phases_bench.c.
#   make bench-phases [PHASES_BENCH_ARGS="--runs 10 --mib 256 --passes 3"]
# A benchmark (timings), not a test; tests/runtime_phases.sh is the test.
PHASES_BENCH_ARGS ?=
$(BUILD)/bench/phases_bench: $(call OBJ,bench/phases_bench.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench-phases
bench-phases: $(BUILD)/bench/phases_bench $(RT_PHASES)
	$(BUILD)/bench/phases_bench --example $(RT_PHASES) $(PHASES_BENCH_ARGS)
-include $(BUILD)/obj/bench/phases_bench.d

# The runtime on a third-party OpenMP program, unmodified: GAP's PageRank
# under `paddiser run` (bench/gapbs_pr.sh). GAPBS_DIR names a checkout of
# github.com/sbeamer/gapbs (not part of this repository); g++ (build-essential,
# installed with the base packages) builds it.
#   make bench-gapbs GAPBS_DIR=~/gapbs [GAPBS_ENV="SCALES='21 22' RUNS=4"]
.PHONY: bench-gapbs
bench-gapbs: all
	@[ -n "$(GAPBS_DIR)" ] || { echo "make bench-gapbs GAPBS_DIR=<a checkout of github.com/sbeamer/gapbs>" >&2; exit 2; }
	env BUILD=$(BUILD) $(GAPBS_ENV) sh bench/gapbs_pr.sh $(GAPBS_DIR)

# GAP's eight kernels under `paddiser run` with its default options, each
# against itself alone (bench/gapbs_suite.sh): what a new user's first runs
# cost, verified or not.
#   make bench-gapbs-suite GAPBS_DIR=~/gapbs [GAPBS_ENV="SCALE=20 TRIALS=4"]
.PHONY: bench-gapbs-suite
bench-gapbs-suite: all
	@[ -n "$(GAPBS_DIR)" ] || { echo "make bench-gapbs-suite GAPBS_DIR=<a checkout of github.com/sbeamer/gapbs>" >&2; exit 2; }
	env BUILD=$(BUILD) $(GAPBS_ENV) sh bench/gapbs_suite.sh $(GAPBS_DIR)
