# Issue #10: `make check-fresh` runs the README's `make demo` and then
# `make check-unit` in a fresh `debootstrap --variant=minbase bookworm` root
# (make, git and ca-certificates only) on a clone of the committed HEAD, as
# root in a chroot; both must pass on the first try (scripts/check-fresh.sh).
# Needs root and the Debian mirror of this machine's apt sources; several
# minutes. PADDISER_KEEP_FRESH=1 keeps the root under $(BUILD)/fresh.* .
CHECK_EXTRA += check-fresh

.PHONY: check-fresh
check-fresh:
	@BUILD=$(BUILD) scripts/check-fresh.sh
