# Simulated-tier evaluation (issue #5, docs/sim.md).
#   make sim-results   regenerates docs/results.md (capacity sweep, all
#                      policies) from the committed profiles
#                      (docs/results-profiles.tar.gz)
#   make sim-reprofile re-profiles the four workloads on this machine,
#                      regenerates docs/results.md from them and packs them
#                      into docs/results-profiles.tar.gz (commit both)
#   make sim-training  Eq. 2 model-training CSV in $(BUILD)/sim/training.csv
#   make check-sim     quick end-to-end study on the base inputs (CHECK_EXTRA)
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

check-sim: $(BUILD)/paddiser
	@BUILD=$(BUILD) sh mk/sim_check.sh

CHECK_EXTRA += check-sim
