# IOPS interoperability (issue #15): IOPS 3.5.8's own `find` and `report`
# on a paddiser run of the membw demo, and paddiser's --summarize and report
# on a run directory IOPS wrote (tests/bench_iops_interop.sh), and
# `paddiser find` against IOPS's find.py (tests/bench_find_iops.sh). IOPS's source
# is not in this repository and nothing is downloaded: point IOPS_SRC at a
# directory holding its iops/ package, e.g.
#   git -C /path/to/iops.git archive HEAD iops | tar -x -C "$(mktemp -d)"
#   make check-iops-interop IOPS_SRC=that-dir
# The always-run checks against committed IOPS 3.5.8 data are
# tests/test_bench_iops_meta.c and tests/bench_iops_meta.sh.

.PHONY: check-iops-interop
check-iops-interop: all $(MEMBW_BIN)
	@test -n "$(IOPS_SRC)" || { echo "check-iops-interop: set IOPS_SRC=DIR (a directory holding IOPS's iops/ package)" >&2; exit 2; }
	@scripts/install-deps.sh python3-pandas python3-jinja2 python3-yaml python3-plotly
	@BUILD=$(BUILD) MEMBW_BIN=$(abspath $(MEMBW_BIN)) IOPS_SRC=$(abspath $(IOPS_SRC)) sh tests/bench_iops_interop.sh
	@BUILD=$(BUILD) IOPS_SRC=$(abspath $(IOPS_SRC)) sh tests/bench_find_iops.sh
