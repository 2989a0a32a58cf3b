# `paddiser run` (issue #14): the preload library, libpaddiser-preload.so.
# Its hooks (src/preload/*.c) stay out of libpaddiser_internal.a: they
# interpose malloc and the OpenMP entry points, which no test binary may get
# by accident. The runtime's objects are linked in (hidden by default, so
# the hooks can use src/common too) and the library exports only the hooks
# and the public API.
# src/preload/preload_mpi.c (the PMPI layer) goes into a second library,
# libpaddiser-preload-mpi.so, built with mpicc when there is one.
PRELOAD_SRCS := $(filter-out src/preload/preload_mpi.c,$(wildcard src/preload/*.c))
PRELOAD_LIB  := $(BUILD)/libpaddiser-preload.so
# What the runtime itself needs (no xgboost: see check-runtime-link).
PRELOAD_LIBS := $(shell pkg-config --libs jansson numa 2>/dev/null) -ldl -lm -lpthread

# No -fopenmp at the link: the program brings its own OpenMP runtime
# (libgomp or libomp), and a second one loaded beside it would take calls
# meant for the first (src/lib/tasks.c takes omp_get_thread_num weakly).
PRELOAD_LDFLAGS = $(filter-out -fopenmp,$(LDFLAGS))
$(PRELOAD_LIB): $(call OBJ,$(PRELOAD_SRCS)) $(RUNTIME_OBJS)
	$(CC) -shared $(PRELOAD_LDFLAGS) -Wl,--no-undefined -o $@ $^ $(PRELOAD_LIBS)

all: $(PRELOAD_LIB)
-include $(patsubst %.c,$(BUILD)/obj/%.d,$(PRELOAD_SRCS))

# Cost of the allocation hooks (bench/run_alloc.sh; a benchmark, not a test).
.PHONY: bench-run-alloc
bench-run-alloc: all
	BUILD=$(BUILD) CC="$(CC)" sh bench/run_alloc.sh

# tests/test_preload_out.c tests the output module alone (no hooks).
$(BUILD)/tests/test_preload_out: $(call OBJ,src/preload/preload_out.c)

# ---- MPI: libpaddiser-preload-mpi.so (issue #14, the PMPI layer) ----------
# The same objects as libpaddiser-preload.so plus src/preload/preload_mpi.c,
# compiled and linked with mpicc around $(CC); built only where mpicc exists
# (make check-runtime-mpi installs OpenMPI first). The MPI program's own
# libmpi is the one the layer's PMPI_ calls reach: the library fits the MPI
# it was built with (OpenMPI here), not another MPI's ABI.
PRELOAD_MPICC   := $(if $(MPICC),$(MPICC),mpicc)
PRELOAD_MPI_LIB := $(BUILD)/libpaddiser-preload-mpi.so
PRELOAD_MPI_OBJ := $(call OBJ,src/preload/preload_mpi.c)
ifneq ($(shell command -v $(PRELOAD_MPICC) 2>/dev/null),)
$(PRELOAD_MPI_OBJ): src/preload/preload_mpi.c | need-pkgs
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(PRELOAD_MPICC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(PRELOAD_MPI_LIB): $(call OBJ,$(PRELOAD_SRCS)) $(PRELOAD_MPI_OBJ) $(RUNTIME_OBJS)
	OMPI_CC=$(CC) $(PRELOAD_MPICC) -shared $(PRELOAD_LDFLAGS) -Wl,--no-undefined -o $@ $^ $(PRELOAD_LIBS)

all: $(PRELOAD_MPI_LIB)
-include $(patsubst %.o,%.d,$(PRELOAD_MPI_OBJ))
endif

# The PMPI layer under SLURM: tests/run_mpi.sh through `srun -n 4` on a
# throwaway localhost SLURM (tests/run_mpi_slurm.sh). Installs SLURM, munge,
# OpenMPI and gfortran (its Fortran programs) when missing; needs root
# (slurmd). make check runs it.
.PHONY: check-run-mpi-slurm
check-run-mpi-slurm:
	@scripts/install-deps.sh slurm-wlm munge openmpi-bin libopenmpi-dev gfortran
	$(MAKE) $(PRELOAD_MPI_LIB)
	RUN_MPI_SLURM=1 BUILD=$(BUILD) sh tests/run_mpi_slurm.sh

CHECK_EXTRA += check-run-mpi-slurm

# What one hooked MPI call costs (bench/mpi_hook_cost.c, a timing, not a
# test): one rank, without the preload, then with it (sim backend): default
# sync points, then none (only leaving the task around blocking calls).
BENCH_RUN_MPI_ARGS ?= 500 16
BENCH_RUN_MPI_BIN  := $(BUILD)/bench/mpi_hook_cost
.PHONY: bench-run-mpi
$(BENCH_RUN_MPI_BIN): bench/mpi_hook_cost.c include/paddiser.h
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(PRELOAD_MPICC) -Iinclude -O2 -std=c11 $(WARNFLAGS) -o $@ $<

bench-run-mpi: $(BENCH_RUN_MPI_BIN) $(PRELOAD_MPI_LIB)
	@echo "== without the preload"
	@mpirun --allow-run-as-root -np 1 $(BENCH_RUN_MPI_BIN) $(BENCH_RUN_MPI_ARGS)
	@echo "== LD_PRELOAD=$(PRELOAD_MPI_LIB) PADDISER_BACKEND=sim"
	@mpirun --allow-run-as-root -np 1 env LD_PRELOAD=$(abspath $(PRELOAD_MPI_LIB)) PADDISER_BACKEND=sim \
		PADDISER_QUIET=1 $(BENCH_RUN_MPI_BIN) $(BENCH_RUN_MPI_ARGS)
	@echo "== same, PADDISER_RUN_MPI_SYNC=none"
	@mpirun --allow-run-as-root -np 1 env LD_PRELOAD=$(abspath $(PRELOAD_MPI_LIB)) PADDISER_BACKEND=sim \
		PADDISER_QUIET=1 PADDISER_RUN_MPI_SYNC=none $(BENCH_RUN_MPI_BIN) $(BENCH_RUN_MPI_ARGS)
