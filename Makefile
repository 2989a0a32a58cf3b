# paddiser build. One Makefile, wildcard-driven so that adding a module is
# adding files: src/<module>/*.c are compiled into build/libpaddiser_internal.a
# (every file but main.c), src/lib/*.c + src/common/*.c also make the public
# runtime libpaddiser.{a,so}, tests/test_*.c become cmocka binaries, and
# tests/*.sh are shell tests. Extra targets live in mk/*.mk fragments.

CC       ?= gcc
BUILD    ?= build
PKGS     := yaml-0.1 jansson cmocka numa
SANITIZE ?=

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CPPFLAGS += -Iinclude -Isrc -D_GNU_SOURCE
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -fopenmp $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lxgboost -lm -lpthread
LDFLAGS  += -fopenmp

# SANITIZE=1: ASan + UBSan (check-asan); SANITIZE=thread: TSan (check-tsan, mk/tsan.mk).
ifeq ($(SANITIZE),thread)
CFLAGS  += -fsanitize=thread -fno-omit-frame-pointer
LDFLAGS += -fsanitize=thread
else ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

MODULES      := common lib train probe bench sim report cli
RUNTIME_SRCS := $(wildcard src/common/*.c src/lib/*.c)
INTERNAL_SRCS := $(filter-out %/main.c,$(foreach m,$(MODULES),$(wildcard src/$(m)/*.c)))
OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

RUNTIME_OBJS  := $(call OBJ,$(RUNTIME_SRCS))
INTERNAL_OBJS := $(call OBJ,$(INTERNAL_SRCS))

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

BINS := $(BUILD)/paddiser $(BUILD)/paddiser-probe

.PHONY: all deps check check-unit check-asan demo clean
.SECONDARY:
all: $(BUILD)/libpaddiser.a $(BUILD)/libpaddiser.so $(BINS)

# Installs missing Debian packages (no-op when all are present).
deps:
	@scripts/install-deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libpaddiser.a: $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libpaddiser.so: $(RUNTIME_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libpaddiser_internal.a: $(INTERNAL_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/paddiser: $(call OBJ,src/cli/main.c) $(BUILD)/libpaddiser_internal.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/paddiser-probe: $(call OBJ,src/probe/main.c) $(BUILD)/libpaddiser_internal.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(BUILD)/libpaddiser_internal.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests (cmocka) and shell tests; tests/run_tests.sh prints the totals.
check-unit: all $(TEST_BINS)
	@BUILD=$(BUILD) tests/run_tests.sh $(TEST_BINS)

# Same suite built with AddressSanitizer + UBSan in a separate build tree.
check-asan: deps
	$(MAKE) BUILD=build-asan SANITIZE=1 check-unit

# CHECK_EXTRA collects integration targets contributed by mk/*.mk fragments.
CHECK_EXTRA :=
-include $(sort $(wildcard mk/*.mk))

check: deps
	$(MAKE) check-unit
	$(MAKE) check-asan
	@for t in $(CHECK_EXTRA); do $(MAKE) $$t || exit 1; done

demo: deps all
	@scripts/demo.sh

clean:
	rm -rf build build-asan

-include $(patsubst %.o,%.d,$(INTERNAL_OBJS) $(call OBJ,src/cli/main.c src/probe/main.c $(TEST_SRCS)))
