# Runtime (issue #4): examples, the MPI integration test, sampler overhead.
#   make runtime-examples        OpenMP + MPI examples in $(BUILD)/examples/runtime
#   make check-runtime-mpi       installs OpenMPI if missing, runs tests/runtime_mpi.sh
#   make bench-runtime-sampler   page-sampling overhead (timings; not a test)
#   make bench-mem-drain         cost of draining one PMU sample ring (timings; not a test)
#   make bench-handler-window    how long a SIGSEGV handler installed in a task goes unnoticed
#   make bench-protect-cost      what arming and disarming sampled pages costs (timings; not a test)
#   make bench-rotate-cost       what drawing the sampled pages afresh costs (timings; not a test)
#   make bench-fault-waits       waits to first touch net of the sampler's faults, real clock (not a test)

RT_EX_DIR      := $(BUILD)/examples/runtime
RT_OMP_EXAMPLE := $(RT_EX_DIR)/omp_example
RT_MPI_EXAMPLE := $(RT_EX_DIR)/mpi_example
RT_OVERHEAD    := $(RT_EX_DIR)/sampler_overhead
RT_PHASES      := $(RT_EX_DIR)/phases
MPICC          ?= mpicc
RT_HAVE_MPICC  := $(shell command -v $(MPICC) 2>/dev/null)

.PHONY: runtime-examples check-runtime-mpi bench-runtime-sampler bench-handler-window

$(RT_EX_DIR)/%: examples/runtime/%.c $(BUILD)/libpaddiser.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libpaddiser.a $(LDFLAGS) $(LDLIBS)

# mpicc wraps $(CC) with OpenMPI's include and library flags.
$(RT_MPI_EXAMPLE): examples/runtime/mpi_example.c $(BUILD)/libpaddiser.a
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libpaddiser.a $(LDFLAGS) $(LDLIBS)

runtime-examples: $(RT_OMP_EXAMPLE) $(RT_PHASES) $(if $(RT_HAVE_MPICC),$(RT_MPI_EXAMPLE))

# The shell tests (tests/runtime_*.sh) run the examples: build them first.
check-unit: runtime-examples

check-runtime-mpi:
	@scripts/install-deps.sh openmpi-bin libopenmpi-dev
	$(MAKE) runtime-examples
	BUILD=$(BUILD) RUNTIME_MPI_REQUIRED=1 sh tests/runtime_mpi.sh
	$(MAKE) $(BUILD)/libpaddiser-preload-mpi.so && BUILD=$(BUILD) RUNTIME_MPI_REQUIRED=1 sh tests/run_mpi.sh

CHECK_EXTRA += check-runtime-mpi

bench-runtime-sampler: $(RT_OVERHEAD)
	$(RT_OVERHEAD) 256 10

# Cost of draining one PMU sample ring (bench/mem_drain_bench.c; a benchmark).
MEM_DRAIN_BENCH_ARGS ?= 200 1024 32768
$(BUILD)/bench/mem_drain_bench: $(call OBJ,bench/mem_drain_bench.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench-mem-drain
bench-mem-drain: $(BUILD)/bench/mem_drain_bench
	$(BUILD)/bench/mem_drain_bench $(MEM_DRAIN_BENCH_ARGS)
-include $(BUILD)/obj/bench/mem_drain_bench.d

HANDLER_WINDOW_ARGS ?= 20
$(BUILD)/bench/handler_window: $(call OBJ,bench/handler_window.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-handler-window: $(BUILD)/bench/handler_window
	PADDISER_QUIET=1 $(BUILD)/bench/handler_window $(HANDLER_WINDOW_ARGS)
-include $(BUILD)/obj/bench/handler_window.d

# What drawing the sampled pages afresh costs a sampled instance (bench/rotate_cost.c; a benchmark).
ROTATE_COST_ARGS ?= 4096 16384 200
$(BUILD)/bench/rotate_cost: $(call OBJ,bench/rotate_cost.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread

.PHONY: bench-rotate-cost
bench-rotate-cost: $(BUILD)/bench/rotate_cost
	PADDISER_QUIET=1 $(BUILD)/bench/rotate_cost $(ROTATE_COST_ARGS)
-include $(BUILD)/obj/bench/rotate_cost.d

# What arming and disarming sampled pages costs here (bench/protect_cost.c; a benchmark).
PROTECT_COST_ARGS ?= 256 512 20 2 0
$(BUILD)/bench/protect_cost: $(call OBJ,bench/protect_cost.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread

.PHONY: bench-protect-cost
bench-protect-cost: $(BUILD)/bench/protect_cost
	$(BUILD)/bench/protect_cost $(PROTECT_COST_ARGS)
-include $(BUILD)/obj/bench/protect_cost.d

# Waits to first touch net of the sampler's own faults, on the real clock
# (bench/fault_waits.c; a benchmark: the unit test uses a fake clock).
FAULT_WAITS_ARGS ?= 50
$(BUILD)/bench/fault_waits: $(call OBJ,bench/fault_waits.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread

.PHONY: bench-fault-waits
bench-fault-waits: $(BUILD)/bench/fault_waits
	$(BUILD)/bench/fault_waits $(FAULT_WAITS_ARGS)
-include $(BUILD)/obj/bench/fault_waits.d

# Eq. 1 by access pattern: the first instance of a new input predicted from
# one base input, one kernel per hint (bench/pattern_accuracy.c; a benchmark).
PATTERN_ACCURACY_ARGS ?=
$(BUILD)/bench/pattern_accuracy: $(call OBJ,bench/pattern_accuracy.c) $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench-pattern-accuracy
bench-pattern-accuracy: $(BUILD)/bench/pattern_accuracy
	$(BUILD)/bench/pattern_accuracy $(PATTERN_ACCURACY_ARGS)
-include $(BUILD)/obj/bench/pattern_accuracy.d
