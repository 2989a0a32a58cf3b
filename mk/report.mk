# Issue #7: the HTML report of a run directory, checked in headless Chromium
# (Debian chromium). tests/report_chromium.sh documents the checks.
CHECK_EXTRA += check-report

# Issue #17 item 3: uPlot (npm package uplot, MIT) is inlined into the report
# for zoom, pan and series toggling. It is fetched at build time with npm
# (scripts/install-deps.sh npm when npm is missing), checked against the
# pinned sha512 (the registry's dist.integrity) and embedded through the
# generated $(BUILD)/gen/uplot_assets.c: nothing of uPlot is committed.
# Registry unreachable: a fallback without uPlot, a loud warning, static
# charts; the next make retries. UPLOT=off: that fallback on purpose.
UPLOT_VERSION   := 1.6.32
UPLOT_INTEGRITY := sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw==
UPLOT ?= on
UPLOT_C := $(BUILD)/gen/uplot_assets.c
UPLOT_O := $(BUILD)/obj/gen/uplot_assets.o
# regenerate whenever the file in place is not the wanted kind (a fallback
# after an offline build is retried; UPLOT=off/on switches)
UPLOT_WANT := $(if $(filter off,$(UPLOT)),pd_uplot_embedded = 0,pd_uplot_embedded = 1)
UPLOT_RETRY := $(shell grep -qs '$(UPLOT_WANT)' $(UPLOT_C) || echo uplot-retry)
.PHONY: uplot-retry
$(UPLOT_C): mk/report.mk scripts/uplot-assets.sh $(UPLOT_RETRY)
	@scripts/uplot-assets.sh $@ $(BUILD)/npm $(UPLOT_VERSION) $(UPLOT_INTEGRITY) $(filter off,$(UPLOT))
$(UPLOT_O): $(UPLOT_C) | need-pkgs
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(BUILD)/libpaddiser_internal.a: $(UPLOT_O)

.PHONY: check-report
check-report: all
	@scripts/install-deps.sh chromium libxml2-utils
	@REPORT_CHROMIUM=1 BUILD=$(BUILD) TESTS_DIR=$(CURDIR)/tests sh tests/report_chromium.sh
	@BUILD=$(BUILD) TESTS_DIR=$(CURDIR)/tests sh tests/report_cli.sh
