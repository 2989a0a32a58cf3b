# Issue #6: real NUMA tiers. `make check-numa` boots Debian's kernel under
# QEMU (TCG) with a CPU-less, HMAT-described node 1 and checks in the guest
# that tier discovery and page migration work (scripts/numa-qemu.sh).

NUMA_GUEST_SRCS := tests/numa/guest_numa.c src/lib/tiers.c src/lib/backend_numa.c \
                   src/common/util.c src/common/sysroot.c
NUMA_GUEST := $(BUILD)/numa/guest_numa
NUMA_TIERS_SRCS := tests/numa/guest_tiers.c src/cli/cmd_tiers.c src/lib/tiers.c src/common/util.c src/common/sysroot.c
NUMA_TIERS := $(BUILD)/numa/paddiser-tiers
NUMA_STATIC_FLAGS := -static -O2 -g -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Iinclude -Isrc -D_GNU_SOURCE

.PHONY: check-numa
CHECK_EXTRA += check-numa

# Static, so the initramfs needs no libc; no sanitizers in the guest.
$(NUMA_GUEST): $(NUMA_GUEST_SRCS) $(wildcard include/*.h src/lib/*.h src/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(NUMA_STATIC_FLAGS) -o $@ $(NUMA_GUEST_SRCS) -lnuma

$(NUMA_TIERS): $(NUMA_TIERS_SRCS) $(wildcard include/*.h src/cli/*.h src/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(NUMA_STATIC_FLAGS) -o $@ $(NUMA_TIERS_SRCS)

check-numa:
	@scripts/install-deps.sh qemu-system-x86 busybox-static
	$(MAKE) $(NUMA_GUEST) $(NUMA_TIERS)
	BUILD=$(BUILD) scripts/numa-qemu.sh $(NUMA_TIERS) $(NUMA_GUEST)
