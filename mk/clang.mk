# The suite built with clang (issue #10): clang-based compilers are common on
# clusters (icx, AOCC, ROCm), so the tree must build and pass with one too.
CLANG_BUILD := build-clang
CHECK_EXTRA += check-clang

.PHONY: check-clang
check-clang:
	@scripts/install-deps.sh clang libomp-dev
	$(MAKE) CC=clang BUILD=$(CLANG_BUILD) check-unit

clean: clean-clang
.PHONY: clean-clang
clean-clang:
	rm -rf $(CLANG_BUILD)
