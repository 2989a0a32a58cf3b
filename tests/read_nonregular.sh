#!/bin/sh
# Files that are not regular (issue #13, item 11): a device never ends and a
# FIFO blocks at open; every reader refuses both at once with "not a
# regular file" instead of reading forever. timeout guards each command: a
# hang fails the test instead of the CI run.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-nonregular.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkfifo "$T/fifo"

# script_template naming a device, then a FIFO
for f in /dev/zero "$T/fifo"; do
    cat >"$T/study.yaml" <<EOY
benchmark:
  name: nonregular
  workdir: ./wd
  repetitions: 1
vars:
  x:
    type: int
    sweep: {mode: list, values: [1]}
command:
  template: "true"
scripts:
  - name: s
    script_template: $f
EOY
    rc=0
    (cd "$T" && timeout 20 "$PD" bench --dry-run study.yaml) >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -ne 124 ] || fail "bench hung reading $f"
    [ "$rc" -ne 0 ] || fail "bench accepted script_template $f"
    grep -q "not a regular file" "$T/err" || fail "bench on $f: $(cat "$T/err")"
done

# a model file that is a device or a FIFO
for f in /dev/zero "$T/fifo"; do
    rc=0
    timeout 20 "$PD" model eval "$f" "$T/none.csv" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -ne 124 ] || fail "model eval hung reading $f"
    [ "$rc" -ne 0 ] || fail "model eval accepted $f"
    grep -q "not a regular file" "$T/err" || fail "model eval $f: $(cat "$T/err")"
done

# PADDISER_MODEL naming a device: ignored with a message, the default serves
rc=0
PADDISER_MODEL=/dev/zero timeout 20 "$PD" model eval default "$T/none.csv" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -ne 124 ] || fail "PADDISER_MODEL=/dev/zero hung"
grep -q "PADDISER_MODEL ignored: /dev/zero: not a regular file" "$T/err" || fail "PADDISER_MODEL: $(cat "$T/err")"
echo "read_nonregular: ok"
