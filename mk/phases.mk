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
