# ThreadSanitizer pass (docs/tsan.md). `make check-tsan` builds the suite
# with -fsanitize=thread in build-tsan/ and runs the tests that exercise
# threads and signals. Every TSan report (from the test binaries and from the
# binaries the shell tests start) goes to a log file; any log fails the check.
#   make check-tsan [TSAN_TESTS="test_x test_y"] [TSAN_SHELL_TESTS="a.sh"]

TSAN_BUILD := build-tsan
TSAN_SUPP  := $(CURDIR)/tests/tsan/tsan.supp

# Cmocka binaries: the runtime (OpenMP tasks, sampler, backends), the native
# model read by several threads, the NUMA budget's concurrent callers, the
# probe, and the bench half (summary is an OpenMP loop); sim runs the
# OpenMP workloads through the runtime's task hooks.
TSAN_TESTS ?= $(notdir $(basename $(wildcard tests/test_runtime*.c))) \
              test_model_native test_numa_budget test_numa_backend test_probe \
              test_bench_config test_summary test_sim
# Shell tests that start the TSan-built binaries: bench executors (signals,
# sigtimedwait), the probe launcher, the OpenMP runtime example.
TSAN_SHELL_TESTS ?= bench_local.sh bench_slurm_stub.sh bench_status_write.sh bench_probe.sh \
                    probe_launcher.sh runtime_examples.sh

# libgomp is not instrumented: in TSan builds every binary gets the fork,
# join, barrier and critical annotations of tests/tsan/gomp_annotate.c
# (itself not instrumented: it only calls TSan's annotation interface).
TSAN_GOMP := $(BUILD)/tsan/gomp_annotate.o
# (The binaries link their prerequisites, $^; the examples' recipe names its
# objects, so they get it through LDLIBS.)
ifeq ($(SANITIZE),thread)
$(BINS) $(TEST_BINS) $(RT_OMP_EXAMPLE) $(RT_MPI_EXAMPLE): $(TSAN_GOMP)
$(RT_OMP_EXAMPLE) $(RT_MPI_EXAMPLE): LDLIBS += $(TSAN_GOMP)
endif

$(TSAN_GOMP): tests/tsan/gomp_annotate.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 $(WARNFLAGS) -fPIC -c $< -o $@

# Reliable and about 30 s of tests (50 s with a fresh build-tsan/) on the
# 2-core machine: part of make check.
CHECK_EXTRA += check-tsan

.PHONY: check-tsan tsan-run clean-tsan
check-tsan: deps
	$(MAKE) BUILD=$(TSAN_BUILD) SANITIZE=thread tsan-run

TSAN_SELFTEST := $(BUILD)/tsan/gomp_selftest
$(TSAN_SELFTEST): tests/tsan/gomp_selftest.c $(TSAN_GOMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^

# Run inside the TSan build (BUILD=build-tsan SANITIZE=thread). First the
# annotations' self-test: a planted race in an OpenMP team must be reported.
TSAN_LOGS := $(abspath $(BUILD))/tsan/logs
tsan-run: all runtime-examples $(addprefix $(BUILD)/tests/,$(TSAN_TESTS)) $(TSAN_SELFTEST)
	@rm -rf $(TSAN_LOGS) $(TSAN_LOGS)-planted && mkdir -p $(TSAN_LOGS) $(TSAN_LOGS)-planted
	@for try in 1 2 3; do \
		TSAN_OPTIONS="log_path=$(TSAN_LOGS)-planted/report exitcode=0" $(TSAN_SELFTEST) race || exit 1; \
		grep -q planted_race $(TSAN_LOGS)-planted/report.* 2>/dev/null && break; \
		[ $$try = 3 ] && { echo "check-tsan: the planted race in tests/tsan/gomp_selftest.c was not reported" >&2; exit 1; }; \
	done
	@echo "[       OK ] gomp_selftest race (reported)"
	@TSAN_OPTIONS="suppressions=$(TSAN_SUPP) log_path=$(TSAN_LOGS)/report $(TSAN_EXTRA_OPTIONS)" \
		BUILD=$(BUILD) sh tests/tsan/run.sh $(TSAN_LOGS) $(TSAN_SELFTEST) \
		$(addprefix $(BUILD)/tests/,$(TSAN_TESTS)) $(addprefix tests/,$(TSAN_SHELL_TESTS))

clean: clean-tsan
clean-tsan:
	rm -rf $(TSAN_BUILD)
