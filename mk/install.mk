# Installation (issue #10) and the checks that the installed library is what
# a user links against.
#   make install PREFIX=/usr/local DESTDIR=      binaries, libpaddiser.{so.N,a},
#                                                headers, paddiser.pc, data, man pages,
#                                                PREFIX/lib/paddiser/libpaddiser-preload*.so
#   make check-install                           (part of check-unit) installs into
#                                                $(BUILD)/install-test and checks it
# PREFIX is compiled into the programs (PREFIX/share/paddiser, pd_paths.h): build
# and install with the same PREFIX. DESTDIR only stages the files.

BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share/paddiser
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/paddiser
INSTALL    ?= install

PC_FILE   := $(BUILD)/paddiser.pc
MAN_PAGES := $(wildcard man/*.1 man/*.3)

.PHONY: install uninstall check-install

# Requires.private/Libs.private: what a static link needs (pkg-config --static).
$(PC_FILE): include/paddiser.h mk/install.mk $(PATHS_H)
	@mkdir -p $(dir $@)
	@{ echo 'prefix=$(PREFIX)'; echo 'libdir=$(LIBDIR)'; echo 'includedir=$(INCLUDEDIR)'; echo; \
	   echo 'Name: paddiser'; \
	   echo 'Description: load-balance-aware data placement for heterogeneous memory'; \
	   echo 'Version: $(VERSION)'; \
	   echo 'Requires.private: jansson numa'; \
	   echo 'Libs: -L$${libdir} -lpaddiser'; \
	   echo 'Libs.private: -fopenmp -lm -lpthread'; \
	   echo 'Cflags: -I$${includedir}'; } >$@

all: $(PC_FILE)

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(DATADIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(BUILD)/libpaddiser.so.$(VERSION) $(DESTDIR)$(LIBDIR)
	ln -sf libpaddiser.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libpaddiser.so
	$(INSTALL) -m 644 $(BUILD)/libpaddiser.a $(DESTDIR)$(LIBDIR)
	$(INSTALL) -d $(DESTDIR)$(PRELOADDIR)
	$(INSTALL) -m 755 $(PRELOAD_LIB) $(DESTDIR)$(PRELOADDIR)
	$(if $(wildcard $(BUILD)/libpaddiser-preload-mpi.so),$(INSTALL) -m 755 $(BUILD)/libpaddiser-preload-mpi.so $(DESTDIR)$(PRELOADDIR))
	$(INSTALL) -m 644 include/paddiser.h include/paddiser_tiers.h $(DESTDIR)$(INCLUDEDIR)
	$(INSTALL) -m 644 $(PC_FILE) $(DESTDIR)$(LIBDIR)/pkgconfig
	$(INSTALL) -m 644 models/default_model.json models/stencil_alpha.csv models/random_cost.csv $(DESTDIR)$(DATADIR)
	$(if $(filter %.1,$(MAN_PAGES)),$(INSTALL) -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1)
	$(if $(filter %.3,$(MAN_PAGES)),$(INSTALL) -m 644 $(filter %.3,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man3)
	$(INSTALL) -m 644 LICENSE CHANGELOG.md README.md $(DESTDIR)$(DOCDIR)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS))) \
	      $(DESTDIR)$(LIBDIR)/libpaddiser.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libpaddiser.so $(DESTDIR)$(LIBDIR)/libpaddiser.a \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/paddiser.pc \
	      $(DESTDIR)$(INCLUDEDIR)/paddiser.h $(DESTDIR)$(INCLUDEDIR)/paddiser_tiers.h \
	      $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
	      $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MAN_PAGES))))
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PRELOADDIR)

# A staged install (this build's PREFIX, so nothing is rebuilt), then
# tests/install/check.sh builds and runs programs against it with pkg-config,
# checks the exported symbols and the SONAME, and that the installed programs
# carry no path of this checkout. Sanitizer builds are left out: their
# libraries need the sanitizer runtime.
INSTALL_TEST := $(abspath $(BUILD))/install-test
check-install: all
	@rm -rf $(INSTALL_TEST) && mkdir -p $(INSTALL_TEST)
	@$(MAKE) -s --no-print-directory install DESTDIR=$(INSTALL_TEST)/root \
		>$(INSTALL_TEST)/install.log 2>&1 || { cat $(INSTALL_TEST)/install.log; exit 1; }
	@CC="$(CC)" SRC_DIR=$(CURDIR) ROOT=$(INSTALL_TEST)/root PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) \
		WORK=$(INSTALL_TEST)/work sh tests/install/check.sh

ifeq ($(SANITIZE),)
check-unit: check-install
endif
