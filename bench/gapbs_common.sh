# What bench/gapbs_pr.sh and bench/gapbs_suite.sh share, sourced after
# they set NAME, GAPBS_DIR and BUILD: the paddiser binary ($PADDISER), a
# check for the tools they need, a folder removed at exit ($T), GAP's
# revision, and a median for awk programs ($MEDIAN).
PADDISER=$(cd "$BUILD" && pwd)/paddiser
[ -x "$PADDISER" ] || { echo "$NAME: $PADDISER missing (make all)" >&2; exit 1; }

need_tools() { # TOOL...
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || { echo "$NAME: $tool not found (Debian: g++, binutils)" >&2; exit 1; }
    done
}

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

gapbs_rev() { (cd "$GAPBS_DIR" && git rev-parse --short HEAD 2>/dev/null) || echo "no git"; }

# The median of a[1..n], awk; it sorts a in place (a[1], a[n]: the range).
MEDIAN='function med(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
