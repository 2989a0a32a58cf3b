# paddiser bench: the membw example kernel and the real-SLURM integration
# test (a throwaway single-node SLURM on localhost, see
# scripts/slurm-localhost.sh). `make check` runs check-slurm via CHECK_EXTRA.

MEMBW_BIN := $(BUILD)/membw-triad
CHECK_SLURM_STUDY ?= examples/membw/membw.yaml

$(MEMBW_BIN): examples/membw/triad.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -std=c11 -Wall -Wextra -Werror -fopenmp -o $@ $<

.PHONY: membw check-slurm
membw: $(MEMBW_BIN)

# Runs examples/membw/membw.yaml through SLURM and checks every repetition
# ran as a SLURM job and produced its metrics. The daemons are stopped by PID
# whatever happens (trap).
check-slurm: all $(MEMBW_BIN)
	@scripts/install-deps.sh slurm-wlm munge
	@set -e; \
	D=$${PADDISER_SLURM_DIR:-/tmp/paddiser-slurm}; \
	W=$$(mktemp -d /tmp/paddiser-check-slurm.XXXXXX); \
	trap 'scripts/slurm-localhost.sh stop; rm -rf "$$W"' EXIT; \
	scripts/slurm-localhost.sh start; \
	export SLURM_CONF=$$D/etc/slurm.conf; \
	MEMBW_BIN=$(abspath $(MEMBW_BIN)) $(BUILD)/paddiser bench $(CHECK_SLURM_STUDY) \
		--executor slurm --parallel 4 --workdir "$$W"; \
	R=$$W/run_001; \
	n=$$(tail -n +2 "$$R/results.csv" | wc -l); \
	[ "$$n" -eq 12 ] || { echo "check-slurm: expected 12 result rows, got $$n"; exit 1; }; \
	if tail -n +2 "$$R/results.csv" | awk -F, '$$6 == "" || $$7 == "" {bad=1} END {exit !bad}'; then \
		echo "check-slurm: missing metrics in results.csv"; cat "$$R/results.csv"; exit 1; fi; \
	for s in "$$R"/exec_*/repetition_*/__iops_status.json; do \
		grep -q '"status": "succeeded"' "$$s" && grep -q '"executor": "slurm"' "$$s" && \
		grep -q '"job_id": "[0-9]' "$$s" || { echo "check-slurm: $$s:"; cat "$$s"; exit 1; }; \
	done; \
	sed -n 2p "$$R/exec_0001/repetition_001/run_triad.sh" | grep -q '^#SBATCH --ntasks=1' || \
		{ echo "check-slurm: generated script lost its #SBATCH header"; exit 1; }; \
	echo "check-slurm: ok (12 repetitions ran as SLURM jobs)"

CHECK_EXTRA += check-slurm
