#!/bin/sh
# scripts/uplot-assets.sh, which embeds uPlot into the report at build time
# (mk/report.mk, docs/report.md "Interactive charts"), on a stub npm so no
# network is used:
#  1. registry unreachable (npm pack fails): a fallback without uPlot, a
#     WARNING on stderr, exit 0, a file that compiles;
#  2. a tarball whose sha512 is not the pinned one: exit 1, nothing written;
#  3. UPLOT=off: the fallback, quietly;
#  4. with the build's cached tarball ($BUILD/npm, when the build fetched it):
#     uPlot embedded from the cache without calling npm, and a second run
#     leaves the file untouched (nothing recompiles).
set -eu
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
root=$(cd "$TESTS_DIR/.." && pwd)
gen=$root/scripts/uplot-assets.sh
version=$(sed -n 's/^UPLOT_VERSION *:= *//p' "$root/mk/report.mk")
integrity=$(sed -n 's/^UPLOT_INTEGRITY *:= *//p' "$root/mk/report.mk")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_uplot_assets: $*" >&2; exit 1; }
[ -n "$version" ] && [ -n "$integrity" ] || fail "no UPLOT_VERSION/UPLOT_INTEGRITY in mk/report.mk"

# the stub npm: STUB_NPM=offline fails as npm does without a registry,
# STUB_NPM=bogus "downloads" a tarball of the wrong content
mkdir "$tmp/bin"
cat >"$tmp/bin/npm" <<'EOF'
#!/bin/sh
echo "$*" >>"$STUB_LOG"
dest=.
while [ $# -gt 0 ]; do [ "$1" = --pack-destination ] && dest=$2; shift; done
case $STUB_NPM in
offline) echo "npm error code ECONNREFUSED" >&2; exit 1 ;;
bogus) echo "not uplot" | gzip >"$dest/uplot-$STUB_VERSION.tgz"; exit 0 ;;
esac
exit 2
EOF
chmod +x "$tmp/bin/npm"
export STUB_LOG="$tmp/npm.log" STUB_VERSION="$version"
run() { PATH="$tmp/bin:$PATH" "$gen" "$@"; }
cc=${CC:-cc}

# 1. offline
STUB_NPM=offline run "$tmp/off.c" "$tmp/cache1" "$version" "$integrity" 2>"$tmp/err1" || fail "offline: exit $?"
grep -q 'pd_uplot_embedded = 0;' "$tmp/off.c" || fail "offline: not a fallback"
grep -q 'WARNING: building WITHOUT uPlot' "$tmp/err1" || fail "offline: no warning on stderr"
grep -q 'ECONNREFUSED' "$tmp/off.c" || fail "offline: the page's reason does not name npm's error"
grep -q "pack uplot@$version" "$tmp/npm.log" || fail "offline: npm pack was not called"
$cc -std=c11 -Wall -Wextra -Werror -I"$root/src" -c "$tmp/off.c" -o "$tmp/off.o" || fail "the fallback does not compile"

# 2. a tarball that is not the pinned one
if STUB_NPM=bogus run "$tmp/bad.c" "$tmp/cache2" "$version" "$integrity" 2>"$tmp/err2"; then
    fail "a tarball with the wrong sha512 was accepted"
fi
grep -q 'does not match the pinned' "$tmp/err2" || fail "mismatch: no error message"
[ ! -e "$tmp/bad.c" ] || fail "mismatch: a file was written"
[ ! -e "$tmp/cache2/uplot-$version.tgz" ] || fail "mismatch: the tarball was cached"

# 3. UPLOT=off
: >"$STUB_LOG"
STUB_NPM=offline run "$tmp/offp.c" "$tmp/cache3" "$version" "$integrity" off 2>"$tmp/err3" || fail "UPLOT=off: exit $?"
grep -q 'pd_uplot_missing\[\] = "built with UPLOT=off"' "$tmp/offp.c" || fail "UPLOT=off: wrong file"
! grep -q WARNING "$tmp/err3" || fail "UPLOT=off warns"
[ ! -s "$STUB_LOG" ] || fail "UPLOT=off called npm"

# 4. from the build's cache
if [ -f "$BUILD/npm/uplot-$version.tgz" ]; then
    mkdir "$tmp/cache4"
    cp "$BUILD/npm/uplot-$version.tgz" "$tmp/cache4/"
    STUB_NPM=offline run "$tmp/on.c" "$tmp/cache4" "$version" "$integrity" 2>"$tmp/err4" || fail "cached: exit $?"
    [ ! -s "$STUB_LOG" ] || fail "cached: npm was called"
    grep -q 'pd_uplot_embedded = 1;' "$tmp/on.c" || fail "cached: uPlot not embedded"
    $cc -std=c11 -Wall -Wextra -Werror -I"$root/src" -c "$tmp/on.c" -o "$tmp/on.o" || fail "the embedded file does not compile"
    touch -d '2000-01-01' "$tmp/on.c"
    STUB_NPM=offline run "$tmp/on.c" "$tmp/cache4" "$version" "$integrity" 2>/dev/null || fail "cached rerun"
    [ "$(find "$tmp/on.c" -newermt '2000-01-02')" = "" ] || fail "an unchanged file was rewritten"
    echo "report_uplot_assets: ok (offline fallback, sha512 mismatch refused, UPLOT=off, from the cache)"
else
    echo "report_uplot_assets: ok (offline fallback, sha512 mismatch refused, UPLOT=off; no cached tarball in $BUILD/npm)"
fi
