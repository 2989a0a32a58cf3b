#!/bin/sh
# make check-fresh (issue #10): the README's two commands on a fresh Debian 12
# root. Builds a `debootstrap --variant=minbase bookworm` root with only make,
# git and ca-certificates added, in a new directory under $BUILD, clones the
# checkout's HEAD commit into it (what is committed is what is tested), and
# runs, chrooted as root, `make demo` and then `make check-unit`: each must
# succeed on the first try.
#
# The Debian mirror is read at run time from this machine's apt sources (the
# first bookworm main deb entry of /etc/apt/sources.list, then
# /etc/apt/sources.list.d/*.list and *.sources in apt's order); it is written
# into no file of the repository. Each chroot runs in its own mount and pid
# namespace (unshare), where the root bound onto itself, a fresh proc, a
# bind of /dev and a read-only sysfs are mounted: they vanish with the namespace whatever happens, and
# nothing of the host's /sys, /proc/sys or daemons is written. The root is
# removed at the end unless PADDISER_KEEP_FRESH=1.
# Needs root. Takes several minutes (debootstrap, apt inside, two builds).
set -eu
cd "$(dirname "$0")/.."
REPO=$(pwd)
BUILD=${BUILD:-build}
SUITE=bookworm

t_start=$(date +%s)
phase_t=$t_start
log() { printf 'check-fresh: %s\n' "$*"; }
die() { printf 'check-fresh: FAILED: %s\n' "$*" >&2; exit 1; }
phase() {
    now=$(date +%s)
    printf '\n== check-fresh: %s\n' "$*"
    phase_t=$now
}
took() { log "$1 ok ($(( $(date +%s) - phase_t )) s)"; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts in a private namespace)"
for tool in unshare chroot git mount; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found"
done

# ---- the mirror: first "deb" entry for bookworm with the main component
mirror_from_list() {   # one-line format: deb [options] URI SUITE COMPONENT...
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$1" 2>/dev/null | awk -v s="$SUITE" '
        $1 == "deb" && $3 == s { for (i = 4; i <= NF; i++) if ($i == "main") { print $2; exit } }'
}
mirror_from_sources() {   # deb822: paragraphs of Types/URIs/Suites/Components
    awk -v s="$SUITE" '
        function has(list, w,   n, a, i) { n = split(list, a, /[ \t]+/); for (i = 1; i <= n; i++) if (a[i] == w) return 1; return 0 }
        function flush() {
            if (has(types, "deb") && has(suites, s) && has(comps, "main") && tolower(enabled) != "no" && uris != "") {
                split(uris, u, /[ \t]+/); print u[1]; found = 1; exit
            }
            types = uris = suites = comps = enabled = ""; key = ""
        }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        /^[^ \t][^:]*:/ {
            key = tolower(substr($0, 1, index($0, ":") - 1)); val = substr($0, index($0, ":") + 1)
        }
        /^[ \t]/ { val = $0 }   # continuation line
        {
            gsub(/^[ \t]+|[ \t]+$/, "", val)
            if (key == "types") types = types " " val
            else if (key == "uris") uris = uris " " val
            else if (key == "suites") suites = suites " " val
            else if (key == "components") comps = comps " " val
            else if (key == "enabled") enabled = val
            sub(/^ /, "", uris)
        }
        END { if (!found) flush() }' "$1" 2>/dev/null
}
find_mirror() {
    m=""
    [ ! -f /etc/apt/sources.list ] || m=$(mirror_from_list /etc/apt/sources.list)
    if [ -z "$m" ] && [ -d /etc/apt/sources.list.d ]; then
        for f in /etc/apt/sources.list.d/*; do
            case "$f" in
                *.list) m=$(mirror_from_list "$f") ;;
                *.sources) m=$(mirror_from_sources "$f") ;;
                *) continue ;;
            esac
            [ -z "$m" ] || break
        done
    fi
    printf '%s\n' "$m"
}

# ---- cleanup: the mounts live only in the namespaces, so by now they are gone;
# still, never delete a tree with something mounted under it.
W=""
cleanup() {
    rc=$?
    [ -n "$W" ] && [ -d "$W" ] || exit $rc
    if [ "${PADDISER_KEEP_FRESH:-0}" = 1 ]; then
        log "root kept (PADDISER_KEEP_FRESH=1): $W/root, logs in $W/logs"
    elif grep -qF " $W/" /proc/self/mountinfo 2>/dev/null; then
        log "something is still mounted under $W: not removing it" >&2
    else
        rm -rf "$W"
    fi
    log "total $(( $(date +%s) - t_start )) s"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail_with_log() {   # PHASE LOGFILE
    printf '\n== check-fresh: %s FAILED after %s s; last lines of %s:\n' "$1" "$(( $(date +%s) - phase_t ))" "$2" >&2
    tail -n 60 "$2" >&2 || :
    # What the failing tests said may lie further up (a shell test's
    # "FAIL: ..." line, cmocka's FAILED/ERROR/LINE lines): the root and its
    # log are removed at exit.
    if grep -qE '(^|: )FAIL|\[  (FAILED|ERROR) +\]' "$2" 2>/dev/null; then
        printf '== check-fresh: the failures in %s:\n' "$2" >&2
        grep -nE '(^|: )FAIL|\[  (FAILED|ERROR) +\]|\[   LINE   \]' "$2" | head -n 40 >&2 || :
    fi
    exit 1
}

# ---- 1. debootstrap on the host
phase "host: debootstrap, mirror, HEAD"
scripts/install-deps.sh debootstrap || die "cannot install debootstrap"
MIRROR=$(find_mirror)
[ -n "$MIRROR" ] || die "no '$SUITE main' deb entry in /etc/apt/sources.list{,.d/*.list,.d/*.sources}"
HEAD=$(git rev-parse --verify HEAD) || die "not a git checkout"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    log "note: uncommitted changes are not tested (testing HEAD $HEAD)"
fi
log "mirror $MIRROR (from this machine's apt sources), HEAD $HEAD"
took "host setup"

mkdir -p "$BUILD"
W=$(mktemp -d "$(cd "$BUILD" && pwd)/fresh.XXXXXX")
R=$W/root
mkdir "$R" "$W/logs"
chmod 755 "$R"   # / of the root: apt's _apt user must traverse it

# ---- 2. the minbase root (debootstrap mounts proc/sys in it: own namespace)
phase "debootstrap --variant=minbase $SUITE (+ make git ca-certificates) into $R"
unshare --mount --fork debootstrap --variant=minbase --include=make,git,ca-certificates \
    "$SUITE" "$R" "$MIRROR" >"$W/logs/debootstrap.log" 2>&1 ||
    { [ ! -f "$R/debootstrap/debootstrap.log" ] || cat "$R/debootstrap/debootstrap.log" >>"$W/logs/debootstrap.log"
      fail_with_log debootstrap "$W/logs/debootstrap.log"; }
cp /etc/resolv.conf "$R/etc/resolv.conf"
# No service is ever started from inside the root (the host's daemons share
# its kernel): the standard chroot guard, in the root only.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
took debootstrap

# ---- 3. the committed tree
phase "git clone of HEAD $HEAD into the root"
if ! { git clone -q --no-hardlinks --no-checkout "$REPO" "$R/root/paddiser" &&
       git -C "$R/root/paddiser" checkout -q --detach "$HEAD"; } >"$W/logs/clone.log" 2>&1; then
    fail_with_log clone "$W/logs/clone.log"
fi
took clone

# in_root LOG COMMAND: COMMAND in /root/paddiser, chrooted as root, in fresh
# mount + pid namespaces (killed with everything it started if we go).
# The root is first bound onto itself so that, as on a real machine, "/" is
# a mount in the chroot's /proc/self/mountinfo (paddiser-probe resolves an
# I/O path to the mount holding it; a bare chroot lists no mount for "/");
# proc is mounted after that, from inside the new pid namespace.
in_root() {
    lg=$1; shift
    # shellcheck disable=SC2016
    unshare --mount --pid --fork --kill-child sh -c '
        set -e
        R=$1; shift
        mount --bind "$R" "$R"
        mount -t proc proc "$R/proc"
        mount --rbind /dev "$R/dev"
        mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
        exec chroot "$R" /usr/bin/env -i HOME=/root TERM=dumb \
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            sh -c "cd /root/paddiser && $*"' in_root "$R" "$@" >"$lg" 2>&1
}

# ---- 4. the README's commands, first try
phase "in the root: make demo"
in_root "$W/logs/demo.log" "make demo" || fail_with_log "make demo" "$W/logs/demo.log"
tail -n 3 "$W/logs/demo.log" | sed 's/^/  | /'
took "make demo"

phase "in the root: make check-unit"
in_root "$W/logs/check-unit.log" "make check-unit" || fail_with_log "make check-unit" "$W/logs/check-unit.log"
grep -E '^(failed:|[0-9]+ passed, [0-9]+ failed)' "$W/logs/check-unit.log" | sed 's/^/  | /' || :
took "make check-unit"

printf '\n'
log "PASS: make demo and make check-unit succeeded first time on a fresh $SUITE minbase root"
