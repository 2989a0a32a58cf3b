#!/bin/sh
# The paddiser-probe binary's Lustre and GPFS I/O sources (issue #18) on a
# fake node: a /proc tree (PADDISER_PROC_ROOT) whose mountinfo puts a Lustre
# and a GPFS mount on real directories, llite stats from the fixtures, and
# the stub mmpmon (tests/fixtures/probe/gpfs/bin/mmpmon, PADDISER_MMPMON).
#   1. io: rows with source=lustre and source=gpfs, exact deltas over the
#      fixture snapshot sequences (the stub's hook puts the next llite stats
#      snapshot in place as the sampler asks mmpmon, which it does after
#      reading the Lustre file, so each sample sees the next one; the third
#      is a cleared stats file: 0, not a burst); one mmpmon for all samples,
#      ended by end of file when the sampler exits; a Lustre mount without
#      stats warned about and left out
#   2. resolve: kinds lustre / gpfs / none in the targets JSON
#   3. mmpmon failing (as without root), GPFS the only target: said so, no
#      trace, exit 0
#   4. a Lustre mount without stats the only target: warning, targets file,
#      no trace, exit 0
set -u
BUILD=${BUILD:-build}
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
FX=$(cd "${TESTS_DIR:-$(dirname "$0")}" && pwd)/fixtures/probe
T=$(mktemp -d /tmp/paddiser_probe_io_fs.XXXXXX)
T=$(cd "$T" && pwd -P) # symlink-free: mountinfo names it as is
fail() { echo "probe_io_fs: FAIL: $*"; rm -rf "$T"; exit 1; }

mkdir -p "$T/lfs/run" "$T/lfs3" "$T/gpfs/in" "$T/proc/self" "$T/rep" \
    "$T/proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000"
cp "$FX/lustre/llite_stats.1" "$T/proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000/stats"
cat >"$T/proc/self/mountinfo" <<EOF
1 0 8:1 / / rw - ext4 /dev/root rw
2 1 0:60 / $T/lfs rw - lustre 10.0.0.1@tcp:/lfs1 rw,flock
3 1 0:61 / $T/lfs3 rw - lustre 10.0.0.1@tcp:/lfs3 rw
4 1 0:62 / $T/gpfs rw - gpfs gpfs1 rw,relatime
EOF
PADDISER_PROC_ROOT=$T/proc
PADDISER_SYS_ROOT=$T/sys
PADDISER_MMPMON=$FX/gpfs/bin/mmpmon
MMPMON_STUB_DIR=$FX/gpfs
MMPMON_STUB_LOG=$T/mmpmon.log
export PADDISER_PROC_ROOT PADDISER_SYS_ROOT PADDISER_MMPMON MMPMON_STUB_DIR MMPMON_STUB_LOG
STATS=$T/proc/fs/lustre/llite/lfs1-ffff8a01c2b3d000/stats
cat >"$T/hook" <<EOF
#!/bin/sh
next="$FX/lustre/llite_stats.\$((\$1 + 1))"
[ -f "\$next" ] && cat "\$next" >"$STATS"
exit 0
EOF
chmod +x "$T/hook"

# 1. io over all three paths
: >"$T/rep/__iops_io_trace_running.1"
MMPMON_STUB_HOOK=$T/hook "$PROBE" io --dir "$T/rep" --attempt 1 --host n1 --interval 0 --samples 2 \
    --io-path "$T/lfs/run" --io-path "$T/gpfs/in" --io-path "$T/lfs3" 2>"$T/err" ||
    fail "io exited $? ($(cat "$T/err"))"
grep -q "warning: io path $T/lfs3 is on lustre (mount $T/lfs3): no Lustre client stats (llite lfs3-\*/stats) in $T/proc/fs/lustre/llite nor $T/sys/kernel/debug/lustre/llite; its I/O is not measured" "$T/err" ||
    fail "no warning for the Lustre mount without stats: $(cat "$T/err")"
csv=$T/rep/__iops_io_trace_n1_1.csv
[ -f "$csv" ] || fail "no trace"
[ "$(head -1 "$csv")" = "timestamp,hostname,source,device,path,interval_s,read_bytes,write_bytes,read_ops,write_ops" ] ||
    fail "header: $(head -1 "$csv")"
# interval_s is measured: checked to be > 0, the rest exactly
got=$(tail -n +2 "$csv" | awk -F, '$6 > 0 { $1 = ""; $6 = "I"; print }' OFS=,)
want=",n1,lustre,lfs1-ffff8a01c2b3d000,$T/lfs/run,I,67108864,33554432,64,32
,n1,gpfs,gpfs1,$T/gpfs/in,I,104857600,0,100,0
,n1,lustre,lfs1-ffff8a01c2b3d000,$T/lfs/run,I,0,0,0,0
,n1,gpfs,gpfs1,$T/gpfs/in,I,0,4096,0,1"
[ "$got" = "$want" ] || fail "rows:
$got
want:
$want"
# rates from the rows (bytes / interval_s): positive where bytes moved
tail -n +2 "$csv" | awk -F, '$7 + $8 > 0 && ($7 + $8) / $6 > 0 { n++ } END { exit n != 3 }' ||
    fail "not three rows with a positive byte rate"
# one mmpmon: started once, asked three times (baseline + 2), saw end of file
[ "$(grep -c '^start$' "$T/mmpmon.log")" = 1 ] || fail "mmpmon started $(grep -c '^start$' "$T/mmpmon.log") times"
[ "$(grep -c '^fs_io_s$' "$T/mmpmon.log")" = 3 ] || fail "fs_io_s asked $(grep -c '^fs_io_s$' "$T/mmpmon.log") times"
[ "$(tail -1 "$T/mmpmon.log")" = eof ] || fail "mmpmon did not see end of file: $(tail -1 "$T/mmpmon.log")"
grep -q '"kind": "lustre", "target": "lfs1-ffff8a01c2b3d000"' "$T/rep/__iops_io_targets_n1_1.json" ||
    fail "targets JSON: $(cat "$T/rep/__iops_io_targets_n1_1.json")"

# 2. resolve
"$PROBE" resolve --host n1 --io-path "$T/lfs/run" --io-path "$T/gpfs/in" --io-path "$T/lfs3" >"$T/json" 2>/dev/null ||
    fail "resolve exited $?"
grep -q "{\"path\": \"$T/lfs/run\", \"kind\": \"lustre\", \"target\": \"lfs1-ffff8a01c2b3d000\", \"mount\": \"$T/lfs\", \"fstype\": \"lustre\"}" "$T/json" &&
    grep -q "{\"path\": \"$T/gpfs/in\", \"kind\": \"gpfs\", \"target\": \"gpfs1\", \"mount\": \"$T/gpfs\", \"fstype\": \"gpfs\"}" "$T/json" &&
    grep -q "{\"path\": \"$T/lfs3\", \"kind\": \"none\", \"target\": \"\", \"mount\": \"$T/lfs3\", \"fstype\": \"lustre\"}" "$T/json" ||
    fail "resolve: $(cat "$T/json")"

# 3. mmpmon failing, GPFS the only target
: >"$T/rep/__iops_io_trace_running.3"
MMPMON_STUB_EXIT=1 "$PROBE" io --dir "$T/rep" --attempt 3 --host n1 --interval 0 --samples 2 \
    --io-path "$T/gpfs/in" 2>"$T/err" || fail "io with a failing mmpmon exited $?"
grep -q "no I/O counters readable ($PADDISER_MMPMON); not sampling" "$T/err" || fail "failing mmpmon: $(cat "$T/err")"
[ ! -e "$T/rep/__iops_io_trace_n1_3.csv" ] || fail "a trace without counters"

# 4. a Lustre mount without stats, the only target
: >"$T/rep/__iops_io_trace_running.4"
"$PROBE" io --dir "$T/rep" --attempt 4 --host n1 --interval 0 --samples 1 --io-path "$T/lfs3" 2>"$T/err" ||
    fail "io on a Lustre mount without stats exited $?"
grep -q "no Lustre client stats" "$T/err" || fail "no warning: $(cat "$T/err")"
[ -f "$T/rep/__iops_io_targets_n1_4.json" ] || fail "no targets file"
[ ! -e "$T/rep/__iops_io_trace_n1_4.csv" ] || fail "a trace without counters"

rm -rf "$T"
echo "probe_io_fs: ok"
