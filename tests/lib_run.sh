# Sourced by tests/run_*.sh (paddiser run, issue #14): NAME must be set.
# Sets PD (the paddiser binary), CC, tmp (removed at exit) and fail();
# exits 0 with a note in a sanitizer build, whose preload library needs the
# sanitizer runtime loaded first and so cannot be preloaded into plain
# programs (check-asan, check-tsan).
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}
CC=${CC:-cc}
PD="$BUILD/paddiser"
fail() { echo "$NAME: $*"; exit 1; }
[ -x "$PD" ] && [ -e "$BUILD/libpaddiser-preload.so" ] || fail "build first (make all)"
if readelf -d "$BUILD/libpaddiser-preload.so" 2>/dev/null | grep -q 'NEEDED.*lib[at]san'; then
    echo "$NAME: sanitizer build ($BUILD): its preload library cannot be preloaded into plain programs, skipped"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
