# Simulated-tier evaluation (issue #5, docs/sim.md).
#   make sim-results   regenerates docs/results.md (capacity sweep, all
#                      policies) from the committed profiles
#                      (docs/results-profiles.tar.gz)
#   make sim-reprofile re-profiles the four workloads on this machine,
#                      regenerates docs/results.md from them and packs them
#                      into docs/results-profiles.tar.gz (commit both)
#   make sim-training  Eq. 2 model-training CSV in $(BUILD)/sim/training.csv
#   make check-sim     quick end-to-end study on the base inputs (CHECK_EXTRA)
#   make sim-profile-large  the workloads at >= 1 GiB, compressed profiles
#   make sim-study-large    a reduced study at that scale (not sim-results)
SIM_PROFILES ?= $(BUILD)/sim/profiles
SIM_PROFILES_TAR := docs/results-profiles.tar.gz

.PHONY: sim-results sim-reprofile sim-training check-sim

# The profiles behind docs/results.md are committed, so the baselines' and
# oracles' rows are reproduced exactly; the runtime's row runs libpaddiser
# live (its own sampling) on every run, which its intervals account for.
sim-results: $(BUILD)/paddiser
	@rm -rf $(BUILD)/sim/committed && mkdir -p $(BUILD)/sim/committed
	tar -xzf $(SIM_PROFILES_TAR) -C $(BUILD)/sim/committed
	PADDISER_QUIET=1 $(BUILD)/paddiser sim study --profile-dir $(BUILD)/sim/committed/profiles -o docs/results.md --csv $(BUILD)/sim/results.csv

# Byte-identical archives for identical profiles: names sorted, no times,
# no owners.
sim-reprofile: $(BUILD)/paddiser
	@rm -rf $(SIM_PROFILES) && mkdir -p $(SIM_PROFILES)
	PADDISER_QUIET=1 $(BUILD)/paddiser sim study --refresh --profile-dir $(SIM_PROFILES) -o docs/results.md --csv $(BUILD)/sim/results.csv
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C $(dir $(SIM_PROFILES)) -cf - $(notdir $(SIM_PROFILES)) | gzip -n -9 >$(SIM_PROFILES_TAR)

sim-training: $(BUILD)/paddiser
	@mkdir -p $(BUILD)/sim
	$(BUILD)/paddiser sim gen-training --profile-dir $(SIM_PROFILES) -o $(BUILD)/sim/training.csv

# The four workloads at their "large" input (>= 1 GiB footprint, docs/sim.md
# Scale), one timed run each, saved compressed (2 MiB units, version 3) in
# $(BUILD)/sim/large; prints each one's wall time. About 8 minutes on an
# idle 2-core machine, most of it dmrg; not part of sim-results.
SIM_LARGE := $(BUILD)/sim/large
.PHONY: sim-profile-large
sim-profile-large: $(BUILD)/paddiser
	@mkdir -p $(SIM_LARGE)
	@for w in stencil spgemm bfs dmrg; do \
		t0=$$(date +%s); \
		$(BUILD)/paddiser sim profile -w $$w -i large -r 1 --unit 2M -o $(SIM_LARGE)/$$w-large.json || exit 1; \
		echo "sim-profile-large: $$w $$(( $$(date +%s) - t0 )) s"; \
	done

# A study cell at that scale: stencil and spgemm large, optane, three
# capacities, one repeat (4 KiB profiles: the runtime's row runs the kernel
# live under libpaddiser; compressed profiles cannot score it).
.PHONY: sim-study-large
sim-study-large: $(BUILD)/paddiser
	@mkdir -p $(SIM_LARGE)
	PADDISER_QUIET=1 $(BUILD)/paddiser sim study -w stencil,spgemm -i large -t optane -c 0.3,0.5,0.7 --repeats 1 -r 1 \
		--profile-dir $(SIM_LARGE)/profiles -o $(SIM_LARGE)/results.md --csv $(SIM_LARGE)/results.csv

check-sim: $(BUILD)/paddiser
	@BUILD=$(BUILD) sh mk/sim_check.sh

CHECK_EXTRA += check-sim

# Page-migration throughput (bench/migrate_bw.c; issue #12 item 3): the
# figure the scorer's per-tier migration bandwidth is set against.
#   make bench-migrate       on this host (skips with one NUMA node)
#   make bench-migrate-numa  inside check-numa's two-node QEMU guest (TCG:
#                            an emulated machine, not hardware numbers);
#                            lines in $(BUILD)/numa/migrate_bw.txt
MIGRATE_BW_GUEST := $(BUILD)/numa/migrate_bw
.PHONY: bench-migrate bench-migrate-numa

$(BUILD)/bench/migrate_bw: bench/migrate_bw.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -O2 -g -std=c11 $(WARNFLAGS) -o $@ $< -lnuma

bench-migrate: $(BUILD)/bench/migrate_bw
	$(BUILD)/bench/migrate_bw $(MIGRATE_BW_ARGS) || [ $$? -eq 77 ]

$(MIGRATE_BW_GUEST): bench/migrate_bw.c
	@mkdir -p $(dir $@)
	$(CC) $(NUMA_STATIC_FLAGS) -o $@ $< -lnuma

# The guest's /init runs /bin/migrate_bw when the initramfs has it; only this
# target puts it there, so check-numa's guest is unchanged.
bench-migrate-numa:
	@scripts/install-deps.sh qemu-system-x86 busybox-static
	$(MAKE) $(MIGRATE_BW_GUEST)
	BUILD=$(BUILD) NUMA_TIMEOUT=$${NUMA_TIMEOUT:-900} scripts/numa-qemu.sh $(MIGRATE_BW_GUEST)
	tr -d '\r' <$(BUILD)/numa/guest.log | grep '^migrate_bw' | tee $(BUILD)/numa/migrate_bw.txt
