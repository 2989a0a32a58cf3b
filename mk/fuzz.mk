# libFuzzer harnesses (docs/fuzz.md, issue #13). `make fuzz [FUZZ_SECS=N]`
# builds fuzz/fuzz_*.c with clang -fsanitize=fuzzer,address,undefined in
# build-fuzz/ and runs each harness for N seconds, one after another; the
# first crash, leak, sanitizer report or timeout fails, naming the file the
# failing input was written to (under build-fuzz/fuzz/artifacts/).
#   make fuzz FUZZ_SECS=300 [FUZZ_TARGETS="study model"] [FUZZ_ARGS=-jobs=1]
# Seeds: fuzz/corpus/<target>/ (read only); what a run adds goes to
# build-fuzz/fuzz/corpus/<target>/, which later runs start from.

FUZZ_BUILD   := build-fuzz
FUZZ_SECS    ?= 10
FUZZ_TARGETS ?= study template traces model report store tables
# clang, and the package with libFuzzer's runtime (libclang_rt.fuzzer) for
# Debian 12's clang 14; libomp-dev for clang's -fopenmp.
FUZZ_DEB_PKGS := clang libclang-rt-14-dev libomp-dev

# In the fuzz build (SANITIZE=fuzz; the Makefile adds ASan + UBSan for any
# SANITIZE but thread) the library gets libFuzzer's coverage hooks too.
ifeq ($(SANITIZE),fuzz)
CFLAGS += -fsanitize=fuzzer-no-link
endif

FUZZ_BINS := $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS))

ifeq ($(SANITIZE),fuzz)
$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< $(BUILD)/libpaddiser_internal.a $(LDLIBS)
else
# fuzz-build and fuzz-run belong to the fuzz build only (never build/).
$(BUILD)/fuzz/fuzz_%:
	@echo "paddiser: the fuzz harnesses build in $(FUZZ_BUILD)/ only: run 'make fuzz [FUZZ_SECS=N]'" >&2; exit 1
endif

# About 5 s per harness: part of make check.
CHECK_EXTRA += check-fuzz

.PHONY: fuzz fuzz-build fuzz-run check-fuzz clean-fuzz
fuzz:
	@scripts/install-deps.sh $(FUZZ_DEB_PKGS)
	$(MAKE) CC=clang BUILD=$(FUZZ_BUILD) SANITIZE=fuzz fuzz-run

check-fuzz:
	$(MAKE) fuzz FUZZ_SECS=5

fuzz-build: $(FUZZ_BINS)

# Run inside the fuzz build (BUILD=build-fuzz SANITIZE=fuzz).
fuzz-run: $(FUZZ_BINS)
	@sh fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECS) "$(FUZZ_ARGS)" $(FUZZ_TARGETS)

clean: clean-fuzz
clean-fuzz:
	rm -rf $(FUZZ_BUILD)
