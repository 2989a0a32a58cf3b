# Issue #7: the HTML report of a run directory, checked in headless Chromium
# (Debian chromium). tests/report_chromium.sh documents the checks.
CHECK_EXTRA += check-report

.PHONY: check-report
check-report: all
	@scripts/install-deps.sh chromium libxml2-utils
	@REPORT_CHROMIUM=1 BUILD=$(BUILD) TESTS_DIR=$(CURDIR)/tests sh tests/report_chromium.sh
	@BUILD=$(BUILD) TESTS_DIR=$(CURDIR)/tests sh tests/report_cli.sh
