# Issue #6: real NUMA tiers. `make check-numa` boots Debian's kernel under
# QEMU (TCG) with a CPU-less, HMAT-described node 1 and checks in the guest
# that tier discovery and page migration work (scripts/numa-qemu.sh).

NUMA_GUEST_SRCS := tests/numa/guest_numa.c src/lib/tiers.c src/lib/backend_numa.c src/lib/backend_util.c \
                   src/common/util.c src/common/sysroot.c
NUMA_GUEST := $(BUILD)/numa/guest_numa
NUMA_TIERS_SRCS := tests/numa/guest_tiers.c src/cli/cmd_tiers.c src/lib/tiers.c src/common/util.c src/common/sysroot.c
NUMA_TIERS := $(BUILD)/numa/paddiser-tiers
NUMA_STATIC_FLAGS := -static -O2 -g -std=c11 $(WARNFLAGS) -Iinclude -Isrc -D_GNU_SOURCE

# End to end through the public API, once the runtime (src/lib/runtime.c) is
# there. Dynamic (the runtime may need shared-only libraries); the whole
# internal archive (every module, and this backend rather than a weak
# fallback of the same name).
NUMA_API := $(BUILD)/numa/guest_numa_api
NUMA_GUESTS := $(NUMA_TIERS) $(NUMA_GUEST)
ifneq ($(wildcard src/lib/runtime.c),)
NUMA_GUESTS += $(NUMA_API)
endif
# paddiser run in the guest: an unmodified OpenMP program (dynamic: the
# preload library needs the loader) and the library itself.
NUMA_RUN_APP := $(BUILD)/numa/guest_run_app
NUMA_GUESTS += $(NUMA_RUN_APP) $(BUILD)/libpaddiser-preload.so

$(NUMA_RUN_APP): tests/numa/guest_run_app.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=c11 $(WARNFLAGS) -fopenmp -o $@ $<

.PHONY: check-numa
CHECK_EXTRA += check-numa

# Static, so the initramfs needs no libc; no sanitizers in the guest.
$(NUMA_GUEST): $(NUMA_GUEST_SRCS) $(wildcard include/*.h src/lib/*.h src/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(NUMA_STATIC_FLAGS) -o $@ $(NUMA_GUEST_SRCS) -lnuma

$(NUMA_TIERS): $(NUMA_TIERS_SRCS) $(wildcard include/*.h src/cli/*.h src/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(NUMA_STATIC_FLAGS) -o $@ $(NUMA_TIERS_SRCS)

$(NUMA_API): tests/numa/guest_numa_api.c $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g -std=c11 $(WARNFLAGS) -o $@ $< \
		-Wl,--whole-archive $(BUILD)/libpaddiser_internal.a -Wl,--no-whole-archive $(LDFLAGS) $(LDLIBS)

check-numa:
	@scripts/install-deps.sh qemu-system-x86 busybox-static
	$(MAKE) $(NUMA_GUESTS)
	BUILD=$(BUILD) scripts/numa-qemu.sh $(NUMA_GUESTS)
