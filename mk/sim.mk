# Simulated-tier evaluation (issue #5, docs/sim.md).
#   make sim-results   re-profiles the four workloads on this machine and
#                      regenerates docs/results.md (capacity sweep, all policies)
#   make sim-training  Eq. 2 model-training CSV in $(BUILD)/sim/training.csv
#   make check-sim     quick end-to-end study on the base inputs (CHECK_EXTRA)
SIM_PROFILES ?= $(BUILD)/sim/profiles

.PHONY: sim-results sim-training check-sim

sim-results: $(BUILD)/paddiser
	@mkdir -p $(BUILD)/sim
	PADDISER_QUIET=1 $(BUILD)/paddiser sim study --refresh --profile-dir $(SIM_PROFILES) -o docs/results.md --csv $(BUILD)/sim/results.csv

sim-training: $(BUILD)/paddiser
	@mkdir -p $(BUILD)/sim
	$(BUILD)/paddiser sim gen-training --profile-dir $(SIM_PROFILES) -o $(BUILD)/sim/training.csv

check-sim: $(BUILD)/paddiser
	@BUILD=$(BUILD) sh mk/sim_check.sh

CHECK_EXTRA += check-sim
