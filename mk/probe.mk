# paddiser-probe extras (issues #2, #18). The probe cost bench is not part of
# `make check`: it measures, it does not test. It compares against sysstat's
# sar, installed here when missing (a plain command in the bench: no service),
# and with IOPS's own sampler when IOPS_SRC (a checkout) or IOPS_GIT_DIR (a
# clone's git directory) says where IOPS is.
.PHONY: bench-probe
bench-probe: $(BUILD)/paddiser-probe
	-scripts/install-deps.sh sysstat
	bash bench/probe_bench.sh $(BUILD)/paddiser-probe

# GPU sampler cost per sample by source (stub NVML vs stub nvidia-smi).
.PHONY: bench-probe-gpu
bench-probe-gpu: $(BUILD)/paddiser-probe
	bash bench/probe_gpu_bench.sh $(BUILD)/paddiser-probe
