#!/bin/sh
# Man pages (man/paddiser.1, man/paddiser-probe.1, man/libpaddiser.3):
#   - they render without a single warning: groff -man -ww -z (groff-base),
#     else mandoc -Tlint; without either the render check is skipped (said
#     so) and the checks below still run;
#   - .TH names the page and the section its file name says, and the version
#     of include/paddiser.h; the usual sections are there;
#   - paddiser.1 names every command of `paddiser --help`, every subcommand of
#     `paddiser sim --help` and `paddiser model --help`, and every --option any
#     command's --help lists; paddiser-probe.1 every subcommand and option of
#     the probe's usage; libpaddiser.3 every function the public headers
#     declare, every pd_status code and the version macros;
#   - every PADDISER_* variable the sources read is in paddiser.1 or
#     libpaddiser.3.
set -u
ROOT=$(cd "${TESTS_DIR:-$(dirname "$0")}/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
errs=0
err() { echo "man_pages: $*" >&2; errs=$((errs + 1)); }
fail() { echo "man_pages: $*" >&2; exit 1; }

PAGES="man/paddiser.1 man/paddiser-probe.1 man/libpaddiser.3"
for p in $PAGES; do [ -s "$p" ] || fail "$p is missing"; done

# ---- rendering -----------------------------------------------------------------
if command -v groff >/dev/null 2>&1; then
    for p in $PAGES; do
        groff -man -Tutf8 -ww -z "$p" >"$T/out" 2>&1 || err "$p: groff failed"
        [ -s "$T/out" ] && { sed "s|^|$p: |" "$T/out" >&2; err "$p: groff warnings (above)"; }
    done
elif command -v mandoc >/dev/null 2>&1; then
    for p in $PAGES; do
        mandoc -Tlint -W warning "$p" >"$T/out" 2>&1
        [ -s "$T/out" ] && { cat "$T/out" >&2; err "$p: mandoc warnings (above)"; }
    done
else
    echo "man_pages: neither groff nor mandoc installed: render check skipped (apt-get install groff-base)"
fi

# ---- .TH and sections ------------------------------------------------------------
version=$(sed -n 's/^#define PD_VERSION_STRING "\(.*\)"$/\1/p' include/paddiser.h)
[ -n "$version" ] || fail "no PD_VERSION_STRING in include/paddiser.h"
for p in $PAGES; do
    base=$(basename "$p"); name=${base%.*}; sec=${base##*.}
    th=$(grep '^\.TH ' "$p")
    [ "$(printf '%s\n' "$th" | wc -l)" -eq 1 ] || err "$p: want exactly one .TH line"
    # .TH NAME SECTION DATE "paddiser X.Y.Z" "MANUAL"
    set -- $th
    want=$(printf '%s' "$name" | tr 'a-z' 'A-Z')
    [ "${2:-}" = "$want" ] || err "$p: .TH names '${2:-}', want '$want'"
    [ "${3:-}" = "$sec" ] || err "$p: .TH section '${3:-}', want '$sec' (the file's extension)"
    printf '%s\n' "$th" | grep -qF "\"paddiser $version\"" || err "$p: .TH does not say \"paddiser $version\""
    case $sec in
    1) need="NAME SYNOPSIS DESCRIPTION OPTIONS EXIT.STATUS ENVIRONMENT FILES SEE.ALSO";;
    3) need="NAME SYNOPSIS DESCRIPTION RETURN.VALUE ENVIRONMENT FILES EXAMPLES SEE.ALSO";;
    *) need="NAME SYNOPSIS DESCRIPTION";;
    esac
    for s in $need; do
        grep -q "^\.SH \"*$s\"*\$" "$p" || err "$p: no .SH $s section"
    done
    grep -q "^$name \\\\- " "$p" || grep -q "^$(printf '%s' "$name" | sed 's/-/\\\\-/g') \\\\- " "$p" ||
        err "$p: NAME line should start with '$name \\- '"
done

# ---- paddiser.1 against the binary's help -----------------------------------------
P1=man/paddiser.1
has_opt() { # PAGE --opt: the option appears as \-\-opt (or -opt as \-opt)
    w=$(printf '%s' "$2" | sed 's/-/\\-/g')
    grep -qF -- "$w" "$1"
}
# First words of the .TP tags of a page (font escapes, quotes, macros and
# roff dashes undone): what the page has an entry for.
tags() { # PAGE
    awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }' "$1" |
        sed 's/\\f[BIRP]//g; s/\\-/-/g; s/"//g; s/^\.[A-Z]* *//' | awk '{ print $1 }' | sort -u
}
tags "$P1" >"$T/tags1"
if [ -x "$BUILD/paddiser" ]; then
    "$BUILD/paddiser" --help >"$T/top" 2>&1 || err "paddiser --help failed"
    sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$T/top" >"$T/cmds"
else
    echo "man_pages: $BUILD/paddiser not built: commands taken from src/cli/main.c"
    sed -n 's/^ *{"\([a-z-]*\)", cmd_.*/\1/p' src/cli/main.c >"$T/cmds"
fi
[ "$(wc -l <"$T/cmds")" -ge 5 ] || err "found only $(wc -l <"$T/cmds") commands in the top-level help"
while read -r c; do
    grep -q "^\.SS $c\$" "$P1" || err "$P1: no .SS section for command '$c'"
    [ -x "$BUILD/paddiser" ] || continue
    "$BUILD/paddiser" "$c" --help >"$T/h" 2>&1 || err "paddiser $c --help failed"
    for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$T/h" | sort -u); do
        has_opt "$P1" "$o" || err "$P1: option $o of 'paddiser $c' is not documented"
    done
    case $c in sim|model)
        # subcommands: lines "  name  ..." of its help
        sed -n 's/^  \([a-z][a-z-]*\)\( .*\)*$/\1/p' "$T/h" >"$T/subs"
        [ "$(wc -l <"$T/subs")" -ge 3 ] || err "found only $(wc -l <"$T/subs") subcommands in 'paddiser $c --help'"
        while read -r s; do
            grep -qx -- "$s" "$T/tags1" || err "$P1: subcommand '$c $s' has no entry (a .TP tag starting with it)"
        done <"$T/subs";;
    esac
done <"$T/cmds"
for o in --help --version; do has_opt "$P1" "$o" || err "$P1: $o is not documented"; done
grep -qF -- '\-\-opt=' "$P1" || err "$P1: the --opt=value form is not mentioned"

# ---- paddiser-probe.1 against the probe's usage --------------------------------------
P2=man/paddiser-probe.1
if [ -x "$BUILD/paddiser-probe" ]; then
    "$BUILD/paddiser-probe" >/dev/null 2>&1
    [ $? -eq 2 ] || err "paddiser-probe without arguments should exit 2"
    "$BUILD/paddiser-probe" --help >"$T/pu" 2>&1 || err "paddiser-probe --help failed"
    # the help lists each subcommand as "  name   description"
    subs=$(sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$T/pu")
    [ -n "$subs" ] || err "no subcommands found in the probe's help"
    for s in $subs; do
        tags "$P2" | grep -qx -- "$s" || err "$P2: subcommand '$s' has no entry"
        "$BUILD/paddiser-probe" "$s" --help >>"$T/pu" 2>&1 || err "paddiser-probe $s --help failed"
    done
    for o in $(grep -o -- '--[a-z][a-z0-9-]*' "$T/pu" | sort -u) --cpu --gpu --probe --help --version; do
        has_opt "$P2" "$o" || err "$P2: option $o is not documented"
    done
else
    echo "man_pages: $BUILD/paddiser-probe not built: probe usage not compared"
fi

# ---- libpaddiser.3 against the headers ---------------------------------------------
P3=man/libpaddiser.3
# every function the public headers declare: "name(" after a type, at line start
sed -n 's/^\(PD_API \)*[a-z][a-z_ ]*[ *]\([a-zA-Z_][a-zA-Z0-9_]*\)(.*/\2/p' include/paddiser.h include/paddiser_tiers.h |
    sort -u >"$T/funcs"
[ "$(wc -l <"$T/funcs")" -ge 20 ] || err "found only $(wc -l <"$T/funcs") functions in include/*.h"
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$P3")
while read -r f; do
    printf '%s\n' "$synopsis" | grep -q "[ *]$f(" || err "$P3: $f is not in the SYNOPSIS"
    grep -q "^\.BR $f ()" "$P3" || err "$P3: $f has no description (.BR $f ())"
done <"$T/funcs"
for m in $(grep -o 'PD_E[A-Z]*\|PD_OK' include/paddiser.h | sort -u) \
         PD_VERSION_MAJOR PD_VERSION_MINOR PD_VERSION_PATCH PD_VERSION_STRING; do
    grep -q "$m" "$P3" || err "$P3: $m is not documented"
done
grep -qF 'pkg\-config \-\-cflags \-\-libs paddiser' "$P3" || err "$P3: the pkg-config link line is missing"

# ---- environment variables ---------------------------------------------------------
for v in $(grep -rho '"PADDISER_[A-Z_]*"' src | tr -d '"' | sort -u); do
    grep -q "$v" "$P1" "$P3" || err "$v (read in src/) is in neither $P1 nor $P3"
done

[ "$errs" -eq 0 ] || fail "$errs problem(s)"
exit 0
