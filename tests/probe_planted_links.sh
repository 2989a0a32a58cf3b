#!/bin/sh
# Links planted in a repetition directory are not written through (issue
# #13, item 2): the sentinel __iops_trace_running.<attempt> truncated its
# link's target, a trace file got sample rows appended to the target, and
# the node launcher's file overwrote the target and made it mode 755. The
# probe block (`paddiser-probe block`) runs here in a directory with such
# links; every target keeps its bytes and its mode.
set -u
BUILD=${BUILD:-build}
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
T=$(mktemp -d /tmp/pd-planted.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "probe_planted_links: FAIL: $*" >&2; exit 1; }
D=$T/rep
mkdir "$D" "$T/victim"
"$PROBE" block --dir "$D" --cpu --interval 0.05 --probe "$PROBE" >"$T/block.sh" || fail "probe block"
{ cat "$T/block.sh"; echo 'sleep 0.4'; } >"$T/job.sh"
victim() { printf 'precious %s\n' "$1" >"$T/victim/$1"; chmod 0600 "$T/victim/$1"; }
intact() {
    [ "$(cat "$T/victim/$1")" = "precious $1" ] || fail "$2: the link's target was written: $(head -c 200 "$T/victim/$1")"
    [ "$(stat -c %a "$T/victim/$1")" = 600 ] || fail "$2: the target's mode changed to $(stat -c %a "$T/victim/$1")"
}
host=$(uname -n)

# 1. the sentinel: no sampler starts through it, the target stays
victim s
ln -s "$T/victim/s" "$D/__iops_trace_running.A1"
(cd "$D" && IOPS_ATTEMPT_ID=A1 sh "$T/job.sh") 2>/dev/null
intact s "sentinel"
[ ! -e "$D/__iops_trace_${host}_A1.csv" ] || fail "a sampler started through a planted sentinel"

# 2. the trace file: the sampler refuses it and says why
victim t
ln -s "$T/victim/t" "$D/__iops_trace_${host}_A2.csv"
(cd "$D" && IOPS_ATTEMPT_ID=A2 sh "$T/job.sh") 2>"$T/err"
intact t "trace"
grep -q "cannot open .*__iops_trace_${host}_A2.csv" "$T/err" || fail "trace link: no message: $(cat "$T/err")"

# 3. the node launcher (and a wrapper): links at their names are replaced,
# not followed (their temporary files have mktemp names now, not the
# predictable NAME.<pid>.tmp a link could be planted at)
victim l
victim w
rm -f "$D/__iops_node_launcher.sh" "$D/__iops_runtime_sampler.sh"
ln -s "$T/victim/l" "$D/__iops_node_launcher.sh"
ln -s "$T/victim/w" "$D/__iops_runtime_sampler.sh"
(cd "$D" && IOPS_ATTEMPT_ID=A3 sh "$T/job.sh") 2>/dev/null
intact l "launcher"
intact w "wrapper"
[ -f "$D/__iops_node_launcher.sh" ] && [ ! -L "$D/__iops_node_launcher.sh" ] || fail "the launcher is still a link"
[ -s "$D/__iops_trace_${host}_A3.csv" ] || fail "no samples with the launcher written anew: $(ls "$D")"
! ls "$D" | grep -Eq '[.]sh[.][A-Za-z0-9]{6}$|[.]tmp' || fail "temporary files left: $(ls "$D")"
echo "probe_planted_links: ok"
