#!/bin/sh
# scripts/slurm-localhost.sh against a planted state directory (issue #13,
# item 3): it used the fixed /tmp/paddiser-slurm, so a local user who made
# it first got a readable munge key copy, chose where slurm.conf went
# through a link, and could have any PID killed by `stop`. Now a directory
# that is a link, someone else's or writable by others is refused before
# anything is written, and stop kills only the daemon a PID file names.
# Starts no daemon.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S=$ROOT/scripts/slurm-localhost.sh
T=$(mktemp -d /tmp/pd-slurm-dir.XXXXXX)
victim=
trap '[ -n "$victim" ] && kill "$victim" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "slurm_localhost_dir: FAIL: $*" >&2; exit 1; }
refused() { # WHAT DIR MESSAGE
    rc=0
    PADDISER_SLURM_DIR=$2 sh "$S" start >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -ne 0 ] || fail "$1: accepted"
    grep -q "$3" "$T/err" || fail "$1: message: $(cat "$T/err")"
}

mkdir "$T/elsewhere"
ln -s "$T/elsewhere" "$T/link"
refused "a link" "$T/link" "is not a directory"
[ -z "$(ls "$T/elsewhere")" ] || fail "something was written through the link: $(ls "$T/elsewhere")"
mkdir -m 0777 "$T/open"
chmod 0777 "$T/open"
refused "world-writable" "$T/open" "writable by others"
[ -z "$(ls "$T/open")" ] || fail "something was written into the open directory"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    mkdir "$T/theirs"
    chown nobody "$T/theirs"
    refused "someone else's" "$T/theirs" "belongs to someone else"
fi

# stop, status and env need the directory named
rc=0; sh "$S" stop >/dev/null 2>"$T/err" || rc=$?
[ $rc -eq 2 ] && grep -q "PADDISER_SLURM_DIR is not set" "$T/err" || fail "stop without a directory: $rc $(cat "$T/err")"

# a planted PID file naming a process that is not the daemon: not killed
mkdir -m 0755 "$T/state" "$T/state/munge"
sleep 300 &
victim=$!
for f in slurmd.pid slurmctld.pid munge/munged.pid; do echo "$victim" >"$T/state/$f"; done
PADDISER_SLURM_DIR=$T/state sh "$S" stop 2>"$T/err" || fail "stop failed: $(cat "$T/err")"
kill -0 "$victim" 2>/dev/null || fail "stop killed a process that is not a daemon"
grep -q "not slurmd: not killing it" "$T/err" || fail "no word about the planted PID: $(cat "$T/err")"
echo "slurm_localhost_dir: ok"
