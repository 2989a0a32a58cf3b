#!/bin/sh
# Runs libFuzzer harnesses one after another (mk/fuzz.mk: make fuzz).
#   fuzz/run.sh BUILD_FUZZ_DIR SECONDS "EXTRA_ARGS" TARGET...
# Each harness BUILD_FUZZ_DIR/fuzz_TARGET runs SECONDS seconds over its
# working corpus BUILD_FUZZ_DIR/corpus/TARGET (new inputs go there) and the
# seeds fuzz/corpus/TARGET (never written). Its log is
# BUILD_FUZZ_DIR/logs/TARGET.log; a failing input is written under
# BUILD_FUZZ_DIR/artifacts/. Stops at the first failure (exit 1).
set -u
dir=$1 secs=$2 extra=$3
shift 3
seeds=$(dirname "$0")/corpus
mkdir -p "$dir/logs" "$dir/artifacts"
for t in "$@"; do
    bin=$dir/fuzz_$t
    log=$dir/logs/$t.log
    mkdir -p "$dir/corpus/$t"
    echo "fuzz: $t: $secs s (log $log)"
    # -timeout: an input taking over 10 s counts as a hang; -rss_limit_mb:
    # over 2 GiB as a memory blow-up. UBSan stops at its first report
    # (-fno-sanitize-recover), which libFuzzer reports as a crash.
    # shellcheck disable=SC2086
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/$t-" $extra "$dir/corpus/$t" "$seeds/$t" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1)
    corp=$(grep -o 'corp: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $t: ${execs:-?} executions, ${cov:-cov: ?}, ${ft:-ft: ?}, ${corp:-corp: ?} inputs, exit $rc"
    if [ "$rc" -ne 0 ]; then
        tail -n 40 "$log" >&2
        art=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        if [ -n "$art" ]; then
            echo "fuzz: $t FAILED: the input is in $art (reproduce: $bin $art)" >&2
        else
            echo "fuzz: $t FAILED (exit $rc): see $log" >&2
        fi
        exit 1
    fi
done
echo "fuzz: all harnesses ran $secs s each without a failure"
