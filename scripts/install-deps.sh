#!/bin/sh
# Installs the Debian packages paddiser needs, only those missing.
# Extra packages can be asked for as arguments (integration targets do this:
# scripts/install-deps.sh chromium libxml2-utils).
#
# Where there is no apt-get/dpkg-query (Spack or environment-modules hosts),
# or with PADDISER_NO_APT=1, nothing is installed: the build needs are
# checked instead (pkg-config modules yaml-0.1 jansson cmocka numa sqlite3 nettle, the
# xgboost header and library through $CC $CPPFLAGS $LDFLAGS, the main command
# of each extra package) and whatever is missing is listed, each with its
# Debian package in brackets, followed by how to point the build at it.
# Exit 0 (silent) when everything is there, 1 otherwise.
#
# As non-root without sudo, it lists the missing packages and the apt-get
# command to run as root, and exits 1.
set -eu

# groff-base: tests/man_pages.sh renders the man pages with groff -ww (warnings fail).
# libsqlite3-dev: bench's cache and sqlite sink; sqlite3: the tests read them back.
# nettle-dev: the cache key's MD5 (IOPS's param_hash).
BASE_PKGS="build-essential pkg-config libyaml-dev libjansson-dev libcmocka-dev libnuma-dev libsqlite3-dev nettle-dev libgsl-dev libxgboost-dev groff-base sqlite3"
# pkg-config module:Debian package, for the check without apt.
PC_MODULES="yaml-0.1:libyaml-dev jansson:libjansson-dev cmocka:libcmocka-dev numa:libnuma-dev sqlite3:libsqlite3-dev nettle:nettle-dev gsl:libgsl-dev"

say() { printf 'install-deps: %s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

# The command that shows an extra package is installed (empty: not known).
pkg_command() {
    case "$1" in
        chromium) echo chromium ;;
        libxml2-utils) echo xmllint ;;
        slurm-wlm) echo slurmctld ;;
        slurmd) echo slurmd ;;
        slurmctld) echo slurmctld ;;
        slurm-client) echo sbatch ;;
        munge) echo munged ;;
        iproute2) echo ip ;;
        openmpi-bin) echo mpirun ;;
        libopenmpi-dev) echo mpicc ;;
        qemu-system-x86) echo qemu-system-x86_64 ;;
        busybox-static|busybox) echo busybox ;;
        debootstrap) echo debootstrap ;;
        groff-base) echo groff ;;
        sqlite3) echo sqlite3 ;;
        python3) echo python3 ;;
        git) echo git ;;
        npm) echo npm ;;
        make) echo make ;;
        *) echo "" ;;
    esac
}

# ---- the check without apt: prints what is missing (after the header $1, if
# any), returns 1 if anything is; silent when everything is there.
check_needs() {
    header=$1
    missing=0
    unchecked=""
    want_pc=0; want_flags=0; want_path=0
    miss() {
        [ -z "$header" ] || { say "$header"; header=""; }
        say "missing: $1 [$2]"; missing=1
    }

    if have pkg-config; then
        for m in $PC_MODULES; do
            mod=${m%%:*}; deb=${m#*:}
            if ! pkg-config --exists "$mod" 2>/dev/null; then
                miss "pkg-config module '$mod'" "$deb"; want_pc=1
            fi
        done
    else
        miss "pkg-config (so modules yaml-0.1 jansson cmocka numa sqlite3 nettle could not be checked)" "pkg-config"
        want_pc=1
    fi

    cc=${CC:-}
    if [ -z "$cc" ]; then
        if have cc; then cc=cc; elif have gcc; then cc=gcc; else cc=cc; fi
    fi
    # shellcheck disable=SC2086
    set -- $cc
    if ! have "$1"; then
        miss "C compiler '$cc' (set CC; xgboost could not be checked)" "build-essential"
    else
        tmp=$(mktemp -d "${TMPDIR:-/tmp}/pd-deps.XXXXXX")
        printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
        printf '#include <xgboost/c_api.h>\nint main(void) { return 0; }\n' >"$tmp/h.c"
        printf 'void XGBoostVersion(int *, int *, int *);\nint main(void) { int a, b, c; XGBoostVersion(&a, &b, &c); return 0; }\n' >"$tmp/l.c"
        # shellcheck disable=SC2086
        if ! $cc ${CPPFLAGS:-} "$tmp/t.c" -o "$tmp/t" ${LDFLAGS:-} >"$tmp/log" 2>&1; then
            first=""; read -r first <"$tmp/log" || :
            miss "a working C compiler: '$cc' cannot build a trivial program (${first:-no message}; xgboost not checked)" "build-essential"
        else
            # shellcheck disable=SC2086
            if ! $cc ${CPPFLAGS:-} -c "$tmp/h.c" -o "$tmp/h.o" >"$tmp/log" 2>&1; then
                miss "xgboost header xgboost/c_api.h (not found by $cc \$CPPFLAGS)" "libxgboost-dev"; want_flags=1
            fi
            # shellcheck disable=SC2086
            if ! $cc ${CPPFLAGS:-} "$tmp/l.c" -o "$tmp/l" ${LDFLAGS:-} -lxgboost >"$tmp/log" 2>&1; then
                miss "xgboost library -lxgboost (cannot link with $cc \$LDFLAGS -lxgboost)" "libxgboost-dev"; want_flags=1
            fi
        fi
        rm -rf "$tmp"
    fi

    for p in $EXTRA; do
        c=$(pkg_command "$p")
        if [ -z "$c" ]; then
            unchecked="$unchecked $p"
        elif ! have "$c"; then
            miss "command '$c' (not on PATH)" "$p"; want_path=1
        fi
    done
    [ -z "$unchecked" ] || say "cannot check package(s)$unchecked without dpkg: assumed present"

    [ "$missing" -eq 1 ] || return 0
    say "install these (module load, spack load, or your own prefix) and point the build at them:"
    [ "$want_path" -eq 0 ] || say "  export PATH=<prefix>/bin:\$PATH   (the directory holding the command)"
    [ "$want_pc" -eq 0 ] || say "  export PKG_CONFIG_PATH=<prefix>/lib/pkgconfig:\$PKG_CONFIG_PATH   (the directory holding <module>.pc)"
    if [ "$want_flags" -eq 1 ]; then
        say "  export CPPFLAGS=\"-I<prefix>/include\"   (the directory holding xgboost/c_api.h)"
        say "  export LDFLAGS=\"-L<prefix>/lib -Wl,-rpath,<prefix>/lib\"   (the directory holding libxgboost.so)"
    fi
    [ "$want_pc$want_flags" = 00 ] ||
        say "  (in the environment, not on the make command line, where they would replace the Makefile's own flags)"
    return 1
}

EXTRA="$*"

if [ "${PADDISER_NO_APT:-0}" = 1 ]; then
    check_needs "PADDISER_NO_APT=1: checked the build needs, installed nothing" || exit 1
    exit 0
fi
if ! have apt-get || ! have dpkg-query; then
    check_needs "no apt-get/dpkg-query here: checked the build needs, installed nothing" || exit 1
    exit 0
fi

missing=""
for p in $BASE_PKGS $EXTRA; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    SUDO=
elif have sudo; then
    SUDO=sudo
else
    say "these Debian packages are missing:$missing"
    say "not root and no sudo here: as root, run"
    say "  apt-get update && apt-get install -y --no-install-recommends$missing"
    say "(or set PADDISER_NO_APT=1 to only check for the build needs, e.g. provided by modules)"
    exit 1
fi
say "installing$missing"
# env: sudo would drop an exported DEBIAN_FRONTEND.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
