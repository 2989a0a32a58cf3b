#!/bin/sh
# The README's Commands block runs as written (issue #17 item 7): every line
# of its first ```sh block, in a scratch directory whose build/ holds links
# to $BUILD's programs (and the membw kernel). `make TARGET` lines are only
# checked to name a target (make -n); the kernel they build is compiled here
# when $BUILD lacks it. Each line must exit 0; a few outputs are checked.
# Needs ~25 s (a 12-repetition bench, sim study --quick, an 80-execution
# simulated bench study).
set -u
ROOT=$(cd "${TESTS_DIR:-$(dirname "$0")}/.." && pwd)
BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "readme_commands: $*" >&2; exit 1; }

awk '/^## Commands/ { s = 1 } s && /^```sh/ { b = 1; next } b && /^```/ { exit } b' "$ROOT/README.md" >"$T/block"
[ "$(grep -c . "$T/block")" -ge 10 ] || fail "no Commands block of 10 lines or more in README.md"

mkdir "$T/work" "$T/work/build"
for f in "$BUILD_ABS"/*; do ln -s "$f" "$T/work/build/"; done
ln -s "$ROOT/examples" "$T/work/examples"
ln -s "$ROOT/docs" "$T/work/docs"
if [ ! -x "$BUILD_ABS/membw-triad" ]; then
    ${CC:-cc} -O2 -std=c11 -fopenmp -o "$T/work/build/membw-triad" "$ROOT/examples/membw/triad.c" ||
        fail "cannot build the membw kernel"
fi

# An ASan build's preload library needs the ASan runtime preloaded before
# it (tests/lib_run_omp.sh does that); `paddiser run` on a plain program is
# left to those tests there.
asan=$(ldd "$BUILD_ABS/libpaddiser-preload.so" 2>/dev/null | grep -c libasan || true)

n=0
while IFS= read -r line; do
    cmd=${line%%#*}
    case "$cmd" in *[![:space:]]*) ;; *) continue ;; esac
    n=$((n + 1))
    case "$cmd" in
    build/paddiser\ run\ *)
        if [ "$asan" -gt 0 ]; then
            echo "readme_commands: '$cmd' skipped (ASan build)"
            continue
        fi ;;
    make\ *)
        target=$(echo "$cmd" | awk '{ print $2 }')
        # as a user types it: the default build/ tree, not the one this
        # suite runs in (check-asan passes BUILD=build-asan down MAKEFLAGS)
        (cd "$ROOT" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n BUILD=build "$target" >/dev/null 2>&1) ||
            fail "README: 'make $target' names no make target"
        continue ;;
    esac
    (cd "$T/work" && PADDISER_QUIET=1 sh -c "$cmd") >"$T/out.$n" 2>"$T/err.$n" ||
        fail "README line failed (exit $?): $cmd
$(tail -5 "$T/err.$n")"
done <"$T/block"

w=$T/work
grep -q 'repetitions succeeded' "$T"/out.* || fail "the bench line did not report its repetitions"
grep -q '12/12 repetitions succeeded' "$T"/out.* || fail "the membw study did not succeed 12 of 12: $(grep -h 'repetitions succeeded' "$T"/out.*)"
[ -s "$w/report.html" ] || fail "no report.html"
[ -s "$w/results.md" ] || fail "no results.md"
[ -s "$w/model.json" ] || fail "no model.json"
grep -q '80/80 repetitions succeeded' "$T"/out.* || fail "examples/sim_study.yaml did not succeed 80 of 80"
grep -q 'class="pd-bar"' "$w/workdir/sim/run_001/report.html" || fail "the sim study's report has no per-task bars"
echo "readme_commands: ok ($n lines)"
