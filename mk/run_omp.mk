# `paddiser run`, OpenMP (issue #14): tests/run_omp.sh (gcc, libgomp) runs
# in check-unit; the clang/libomp and gfortran tests skip there when their
# compilers are missing. check-run-omp installs them and runs all three
# with RUN_OMP_REQUIRED=1, so a skip is a failure.
#   make check-run-omp     installs gfortran, clang, libomp-dev if missing; runs tests/run_omp*.sh
#   make bench-run-omp     overhead of the preload on ~50 ms regions (timings; not a test)
.PHONY: check-run-omp bench-run-omp

check-run-omp:
	@scripts/install-deps.sh gfortran clang libomp-dev
	$(MAKE) $(PRELOAD_LIB)
	@for t in run_omp run_omp_clang run_omp_fortran; do \
	    BUILD=$(BUILD) TESTS_DIR=$(CURDIR)/tests RUN_OMP_REQUIRED=1 sh tests/$$t.sh || exit 1; \
	done

CHECK_EXTRA += check-run-omp

RUN_OMP_BENCH_ARGS ?=
bench-run-omp: $(PRELOAD_LIB)
	BUILD=$(BUILD) sh bench/run_omp_overhead.sh $(RUN_OMP_BENCH_ARGS)
