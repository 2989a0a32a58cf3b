# Shared CSV reader benchmark (docs/summary.md, "Performance"). Not part of
# `make check`: it writes a ~240 MB synthetic run and takes tens of seconds.
#   make bench-csv [BENCH_RUN=dir] [RUNS=n]
BENCH_RUN ?= /tmp/paddiser-summary-bench
RUNS ?= 3

.PHONY: bench-csv
$(BUILD)/bench/summary_bench: $(call OBJ,bench/summary_bench.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-csv: $(BUILD)/bench/summary_bench
	rm -rf $(BENCH_RUN)
	$< gen $(BENCH_RUN)
	OMP_NUM_THREADS=1 RUNS=$(RUNS) $< summary $(BENCH_RUN)
	RUNS=$(RUNS) $< stream $(BENCH_RUN)
	RUNS=$(RUNS) $< load $(BENCH_RUN)

-include $(BUILD)/obj/bench/summary_bench.d
