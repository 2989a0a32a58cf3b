#!/bin/sh
# scripts/install-deps.sh where it must not install: run with a PATH that
# holds only sh, mktemp, rm and fakes (no apt-get, no dpkg-query), and with
# PADDISER_NO_APT=1 beside fake apt-get/dpkg-query/sudo that record any call.
# A fake pkg-config reports the modules named in FAKE_PC_MISSING as missing;
# a fake C compiler records its arguments and fails the trivial program (t),
# the xgboost header (h) or link (l) check as FAKE_CC_FAIL says. Checks the exit status and that the
# messages name what is missing, its Debian package and how to point the
# build at it; and, as a non-root user with no sudo (fake id), that the
# missing packages and the apt-get command are printed, nothing run.
# Installs nothing and needs no root.
set -eu
# The fake cc below stands for the compiler; a CC from the caller (make
# CC=clang check-unit exports it) would name one the restricted PATH lacks.
unset CC CPPFLAGS LDFLAGS
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
SCRIPT=$TESTS_DIR/../scripts/install-deps.sh
SH=$(command -v sh)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "install_deps: $*" >&2; [ ! -f "$T/out" ] || sed 's/^/  | /' "$T/out" >&2; exit 1; }

# ---- the restricted PATH: symlinks to the real tools the script needs, and fakes
bin=$T/bin
mkdir "$bin"
for tool in sh mktemp rm; do
    ln -s "$(command -v "$tool")" "$bin/$tool"
done
cat >"$bin/pkg-config" <<EOF
#!$SH
[ "\$1" = --exists ] || exit 2
shift
for m in "\$@"; do
    for x in \${FAKE_PC_MISSING:-}; do [ "\$m" != "\$x" ] || exit 1; done
done
exit 0
EOF
cat >"$bin/cc" <<EOF
#!$SH
echo "\$0 \$*" >>"$T/cc.log"
case " \$* " in *" -c "*) what=h ;; *" -lxgboost "*) what=l ;; *) what=t ;; esac
case "\${FAKE_CC_FAIL:-}" in *\$what*) exit 1 ;; esac
exit 0
EOF
chmod +x "$bin/pkg-config" "$bin/cc"
ln -s cc "$bin/mycc"

# run NAME [ARGS...]: the script under the restricted PATH; sets rc, output in $T/out
run() {
    rc=0
    PATH=$bin TMPDIR=$T "$SH" "$SCRIPT" "$@" >"$T/out" 2>&1 || rc=$?
}
has() { grep -qF -- "$1" "$T/out" || fail "$case: no '$1' in the output"; }
hasnt() { ! grep -qF -- "$1" "$T/out" || fail "$case: '$1' in the output"; }
status() { [ "$rc" -eq "$1" ] || fail "$case: exit $rc, want $1"; }

# 1. no apt, everything there: silent success
case=all-present
run; status 0
[ ! -s "$T/out" ] || fail "$case: not silent"
grep -q -- "-lxgboost" "$T/cc.log" || fail "$case: xgboost link not checked"

# 2. no apt, numa's .pc missing: named with its Debian package, exit 1
case=numa-missing
FAKE_PC_MISSING=numa run; status 1
has "no apt-get/dpkg-query"
has "pkg-config module 'numa' [libnuma-dev]"
has "PKG_CONFIG_PATH"
hasnt "jansson"; hasnt "xgboost"

# 3. no apt, xgboost cannot be linked: CC, CPPFLAGS and LDFLAGS honoured
case=xgboost-link
rm -f "$T/cc.log"
CC="mycc -DPD_X=1" CPPFLAGS="-I/opt/pdx/include" LDFLAGS="-L/opt/pdx/lib" FAKE_CC_FAIL=l run; status 1
has "xgboost library -lxgboost"; has "[libxgboost-dev]"; has "LDFLAGS"
hasnt "xgboost header"
grep -q "mycc .*-DPD_X=1 .*-I/opt/pdx/include .*-c" "$T/cc.log" || fail "$case: header check without CC/CPPFLAGS"
grep -q "mycc .*-I/opt/pdx/include .*-L/opt/pdx/lib -lxgboost" "$T/cc.log" || fail "$case: link check without CC/LDFLAGS"

# 4. no apt, header missing too
case=xgboost-header
FAKE_CC_FAIL=hl run; status 1
has "xgboost header xgboost/c_api.h"; has "CPPFLAGS"

# 4b. a compiler that builds nothing: said so, xgboost not blamed
case=broken-cc
FAKE_CC_FAIL=t run; status 1
has "a working C compiler"; has "[build-essential]"
hasnt "xgboost header"; hasnt "xgboost library"

# 5. extra packages: a mapped command missing fails, an unmappable one is assumed
case=extras
run chromium pd-no-such-package; status 1
has "command 'chromium' (not on PATH) [chromium]"
has "pd-no-such-package"; has "assumed present"
case=extras-unchecked
run pd-no-such-package; status 0
has "assumed present"

# 6. no pkg-config at all
case=no-pkg-config
mv "$bin/pkg-config" "$T/pkg-config"
run; status 1
has "pkg-config"; has "[pkg-config]"
mv "$T/pkg-config" "$bin/pkg-config"

# 7. PADDISER_NO_APT=1 where apt exists: same check, apt never called
case=no-apt-env
fbin=$T/fakeapt
mkdir "$fbin"
for tool in apt-get dpkg-query sudo; do
    printf '#!%s\necho "%s $*" >>"%s/apt-called"\nexit 1\n' "$SH" "$tool" "$T" >"$fbin/$tool"
    chmod +x "$fbin/$tool"
done
rc=0
PATH=$fbin:$bin:$PATH PADDISER_NO_APT=1 FAKE_PC_MISSING=cmocka TMPDIR=$T "$SH" "$SCRIPT" >"$T/out" 2>&1 || rc=$?
status 1
has "pkg-config module 'cmocka' [libcmocka-dev]"
has "PADDISER_NO_APT=1"; hasnt "no apt-get/dpkg-query"
[ ! -e "$T/apt-called" ] || fail "$case: called $(cat "$T/apt-called")"
rc=0
PATH=$fbin:$bin:$PATH PADDISER_NO_APT=1 TMPDIR=$T "$SH" "$SCRIPT" >"$T/out" 2>&1 || rc=$?
status 0
[ ! -s "$T/out" ] || fail "$case: not silent when all present"

# 8. apt there, not root, no sudo: the packages and the apt-get command, nothing run
case=no-sudo
nbin=$T/nosudo
mkdir "$nbin"
for tool in sh mktemp rm grep; do ln -s "$(command -v "$tool")" "$nbin/$tool"; done
printf '#!%s\necho 1000\n' "$SH" >"$nbin/id"
# shellcheck disable=SC2016
printf '#!%s\n[ "$3" = libnuma-dev ] && exit 1\necho "install ok installed"\n' "$SH" >"$nbin/dpkg-query"
cp "$fbin/apt-get" "$nbin/apt-get"
chmod +x "$nbin/id" "$nbin/dpkg-query"
rc=0
PATH=$nbin TMPDIR=$T "$SH" "$SCRIPT" >"$T/out" 2>&1 || rc=$?
status 1
has "missing: libnuma-dev"
has "apt-get update && apt-get install -y --no-install-recommends libnuma-dev"
has "not root and no sudo"
[ ! -e "$T/apt-called" ] || fail "$case: called $(cat "$T/apt-called")"
echo "install_deps: 9 cases ok"
