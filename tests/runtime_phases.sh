#!/bin/sh
# examples/runtime/phases (four phases, per-input reallocation, a revisited
# input) at a few MiB on 2 threads, with the runtime on the sim backend and
# with no runtime call: both verify every instance and give the same
# checksums; with the runtime, the ten objects are registered, keep their ids
# 0-9 across three reallocations, every instance ends in a sync point, and
# both tasks are planned from the second instance on. No timing is checked.
set -eu
BUILD=${BUILD:-build}
EX="$BUILD/examples/runtime/phases"
[ -x "$EX" ] || { echo "runtime_phases: $EX not built (make runtime-examples)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "runtime_phases: $*"; cat "$tmp/on" "$tmp/err_on" 2>/dev/null; exit 1; }
args="--mib 4 --scales 0.5,1,0.75,0.5 --reps 3 --threads 2"
# shellcheck disable=SC2086
PADDISER_BACKEND=sim PADDISER_FAST_CAPACITY=1048576 PADDISER_QUIET=1 \
    "$EX" $args >"$tmp/on" 2>"$tmp/err_on" || fail "the run with the runtime failed"
# shellcheck disable=SC2086
"$EX" $args --no-runtime >"$tmp/off" 2>"$tmp/err_off" || fail "the run without the runtime failed"

n_on=$(grep -c '^instance=' "$tmp/on" || true)
[ "$n_on" -eq 12 ] || fail "expected 12 instance lines, got $n_on"
grep '^instance=' "$tmp/on" | grep -Ev ' ok=1( |$)' && fail "an instance did not verify with the runtime"
grep '^instance=' "$tmp/off" | grep -Ev ' ok=1( |$)' && fail "an instance did not verify without the runtime"
sed -n 's/^instance=\([0-9]*\) .* checksum=\([^ ]*\) .*/\1 \2/p' "$tmp/on" >"$tmp/sum_on"
sed -n 's/^instance=\([0-9]*\) .* checksum=\([^ ]*\) .*/\1 \2/p' "$tmp/off" >"$tmp/sum_off"
[ "$(wc -l <"$tmp/sum_on")" -eq 12 ] || fail "checksums not found"
cmp -s "$tmp/sum_on" "$tmp/sum_off" || { diff "$tmp/sum_on" "$tmp/sum_off"; fail "checksums differ"; }
# The revisited input (4th visit) is the first one's: same checksums.
[ "$(sed -n 1p "$tmp/sum_on" | cut -d' ' -f2)" = "$(sed -n 10p "$tmp/sum_on" | cut -d' ' -f2)" ] ||
    fail "the revisited input gives other checksums than its first visit"

# Objects: registered at every visit under the same ids 0-9.
[ "$(grep -c '^input: .* ids=0,1,2,3,4,5,6,7,8,9$' "$tmp/on")" -eq 4 ] || fail "object ids not kept across reallocation"
summary=$(grep '^summary:' "$tmp/on") || fail "no summary line"
for kv in instances=12 verified=12 runtime_errors=0 ids_kept=1 rt_instances=12 planned_tasks=2 backend=sim; do
    case " $summary " in *" $kv "*) ;; *) fail "summary lacks $kv: $summary";; esac
done
# Planned: a predicted makespan for every instance after the first.
bad=$(sed -n 's/^instance=\([0-9]*\) .* predicted_s=\([^ ]*\) .*/\1 \2/p' "$tmp/on" |
      awk '$1 > 0 && !($2 + 0 > 0) { n++ } END { print n + 0 }')
[ "$bad" -eq 0 ] || fail "$bad instances after the first without a predicted makespan"
# Sampled: every line says whether the sampler armed pages in it; the first
# instance always is (its profile), and the count matches the summary's.
[ "$(grep -c '^instance=.* sampled=[01]\( \|$\)' "$tmp/on")" -eq 12 ] || fail "an instance line lacks sampled=0|1"
grep -q '^instance=0 .* sampled=1' "$tmp/on" || fail "the first instance not sampled"
n_sampled=$(grep -c '^instance=.* sampled=1' "$tmp/on" || true)
case " $summary " in *" instances_sampled=$n_sampled "*) ;; *) fail "$n_sampled sampled lines against: $summary";; esac
[ "$(grep -c '^instance=.* sampled=0' "$tmp/off")" -eq 12 ] || fail "--no-runtime reports a sampled instance"
case "$(grep '^summary:' "$tmp/off")" in *" rt_instances=0 "*"backend=off"*) ;; *) fail "--no-runtime called the runtime";; esac

# Bad arguments: a usage message, no crash.
if "$EX" --reps 0 >/dev/null 2>"$tmp/err"; then fail "--reps 0 accepted"; fi
grep -q usage "$tmp/err" || fail "no usage message"
echo "runtime_phases: ok"
