# Issue #6: real NUMA tiers. `make check-numa` boots Debian's kernel under
# QEMU (TCG) with a CPU-less, HMAT-described node 1 and checks in the guest
# that tier discovery and page migration work (scripts/numa-qemu.sh).

NUMA_GUEST_SRCS := tests/numa/guest_numa.c src/lib/tiers.c src/lib/backend_numa.c \
                   src/common/util.c src/common/sysroot.c
NUMA_GUEST := $(BUILD)/numa/guest_numa

.PHONY: check-numa
CHECK_EXTRA += check-numa

# Static, so the initramfs needs no libc; no sanitizers in the guest.
$(NUMA_GUEST): $(NUMA_GUEST_SRCS) $(wildcard include/*.h src/lib/*.h src/common/*.h)
	@mkdir -p $(dir $@)
	$(CC) -static -O2 -g -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Iinclude -Isrc -D_GNU_SOURCE \
		-o $@ $(NUMA_GUEST_SRCS) -lnuma

check-numa:
	@scripts/install-deps.sh qemu-system-x86 busybox-static
	$(MAKE) $(NUMA_GUEST)
	BUILD=$(BUILD) scripts/numa-qemu.sh $(NUMA_GUEST)
