# paddiser-probe extras (issue #2). The sampler overhead bench is not part of
# `make check`: it measures, it does not test.
.PHONY: bench-probe
bench-probe: $(BUILD)/paddiser-probe
	bash bench/probe_bench.sh $(BUILD)/paddiser-probe

# GPU sampler cost per sample by source (stub NVML vs stub nvidia-smi).
.PHONY: bench-probe-gpu
bench-probe-gpu: $(BUILD)/paddiser-probe
	bash bench/probe_gpu_bench.sh $(BUILD)/paddiser-probe
