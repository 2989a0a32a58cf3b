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

$(PRELOAD_LIB): $(call OBJ,$(PRELOAD_SRCS)) $(RUNTIME_OBJS)
	$(CC) -shared $(LDFLAGS) -Wl,--no-undefined -o $@ $^ $(PRELOAD_LIBS)

all: $(PRELOAD_LIB)
-include $(patsubst %.c,$(BUILD)/obj/%.d,$(PRELOAD_SRCS))

# Cost of the allocation hooks (bench/run_alloc.sh; a benchmark, not a test).
.PHONY: bench-run-alloc
bench-run-alloc: all
	BUILD=$(BUILD) CC="$(CC)" sh bench/run_alloc.sh

# tests/test_preload_out.c tests the output module alone (no hooks).
$(BUILD)/tests/test_preload_out: $(call OBJ,src/preload/preload_out.c)
