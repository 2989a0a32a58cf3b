#!/bin/sh
# Checks a staged `make install` (mk/install.mk, check-install): ROOT is the
# DESTDIR, PREFIX/LIBDIR the configured paths, SRC_DIR the checkout, WORK a
# scratch directory. A user's view: pkg-config finds the library, a program
# built with its flags runs (shared and static), the shared library has its
# SONAME and exports exactly the functions of the public headers, and the
# installed programs carry no path of the checkout they were built from.
set -u
: "${ROOT:?}" "${PREFIX:?}" "${LIBDIR:?}" "${SRC_DIR:?}" "${WORK:?}"
CC=${CC:-cc}
fail=0
bad() { echo "check-install: $*" >&2; fail=1; }
mkdir -p "$WORK" || exit 1
lib=$ROOT$LIBDIR

# pkg-config on the staged tree: the sysroot prefixes -I/-L with ROOT.
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$ROOT"
want=$(sed -n 's/^#define PD_VERSION_STRING "\(.*\)"$/\1/p' "$SRC_DIR/include/paddiser.h")
got=$(pkg-config --modversion paddiser) || bad "pkg-config does not find paddiser.pc in $lib/pkgconfig"
[ "$got" = "$want" ] || bad "paddiser.pc says version '$got', paddiser.h says '$want'"

# Shared: the SONAME, and the link by pkg-config's flags alone.
major=${want%%.*}
soname=$(readelf -d "$lib/libpaddiser.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libpaddiser.so.$major" ] || bad "SONAME is '$soname', expected libpaddiser.so.$major"
[ -e "$lib/libpaddiser.so.$major" ] || bad "$LIBDIR/libpaddiser.so.$major is missing"
# shellcheck disable=SC2046
if $CC -o "$WORK/globals_shared" "$SRC_DIR/tests/install/common_globals.c" $(pkg-config --cflags --libs paddiser) \
        2>"$WORK/shared.err"; then
    LD_LIBRARY_PATH="$lib" "$WORK/globals_shared" || bad "the dynamically linked program failed"
    if ! LD_LIBRARY_PATH="$lib" ldd "$WORK/globals_shared" | grep -q "libpaddiser.so.$major => $lib/"; then
        bad "the program does not load the installed libpaddiser.so.$major"
    fi
else
    cat "$WORK/shared.err" >&2; bad "building against the shared library with pkg-config's flags failed"
fi
# Static: pkg-config --static, the archive named so the .so is not preferred.
cflags=$(pkg-config --cflags paddiser)
libs=$(pkg-config --static --libs paddiser | sed "s|-lpaddiser|$lib/libpaddiser.a|")
# shellcheck disable=SC2086
if $CC -o "$WORK/globals_static" "$SRC_DIR/tests/install/common_globals.c" $cflags $libs 2>"$WORK/static.err"; then
    "$WORK/globals_static" || bad "the statically linked program failed"
else
    cat "$WORK/static.err" >&2; bad "building against libpaddiser.a with pkg-config --static's flags failed"
fi

# Exported names = the PD_API functions of the installed headers, no more, no less.
sed -n 's/^PD_API .*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$ROOT$PREFIX"/include/paddiser*.h | sort -u >"$WORK/api"
[ -s "$WORK/api" ] || bad "no PD_API declarations found in the installed headers"
nm -D --defined-only "$lib/libpaddiser.so" | awk '{print $NF}' | sort -u >"$WORK/dynsym"
nm --defined-only --extern-only "$lib/libpaddiser.a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u >"$WORK/arsym"
for kind in dynsym arsym; do
    extra=$(comm -13 "$WORK/api" "$WORK/$kind" | tr '\n' ' ')
    missing=$(comm -23 "$WORK/api" "$WORK/$kind" | tr '\n' ' ')
    [ -z "$extra" ] || bad "$kind: exported but not public API: $extra"
    [ -z "$missing" ] || bad "$kind: public API not exported: $missing"
done

# Installed programs and libraries: no path of the checkout in their data
# (debug info may name source files; that is not read at run time).
for f in "$ROOT$PREFIX"/bin/* "$lib/libpaddiser.so.$want" "$ROOT$PREFIX"/lib/paddiser/*.so; do
    objcopy -O binary --only-section=.rodata "$f" "$WORK/rodata" 2>/dev/null || { bad "objcopy failed on $f"; continue; }
    if grep -qF "$SRC_DIR" "$WORK/rodata"; then bad "$f has the checkout's path $SRC_DIR compiled in"; fi
done
for f in default_model.json stencil_alpha.csv random_cost.csv; do
    cmp -s "$ROOT$PREFIX/share/paddiser/$f" "$SRC_DIR/models/$f" || bad "share/paddiser/$f is not models/$f"
done
"$ROOT$PREFIX/bin/paddiser" --help >/dev/null 2>&1 || bad "installed paddiser --help failed"
# paddiser run (issue #14): the preload library in PREFIX/lib/paddiser, where
# the installed command looks for it; it runs a program from there.
pre="$ROOT$PREFIX/lib/paddiser/libpaddiser-preload.so"
[ -e "$pre" ] || bad "$PREFIX/lib/paddiser/libpaddiser-preload.so is missing"
"$ROOT$PREFIX/bin/paddiser" run --help 2>/dev/null | grep -qF "$PREFIX/lib/paddiser" ||
    bad "installed paddiser run does not look in $PREFIX/lib/paddiser"
if [ -e "$pre" ]; then
    out=$(PADDISER_PRELOAD_DIR="$ROOT$PREFIX/lib/paddiser" "$ROOT$PREFIX/bin/paddiser" run -- /bin/echo installed-run 2>&1) ||
        bad "installed paddiser run with the installed library failed: $out"
    [ "$out" = installed-run ] || bad "installed paddiser run printed '$out'"
fi

[ "$fail" -eq 0 ] && echo "[       OK ] check-install: pkg-config, shared + static link, $(wc -l <"$WORK/api") exported symbols, SONAME $soname"
exit "$fail"
