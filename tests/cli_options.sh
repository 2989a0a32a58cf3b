#!/bin/sh
# Option parsing of every command and subcommand of paddiser and
# paddiser-probe (getopt_long, src/common/cliopt.h): --help and -h print the
# command's own usage to stdout and exit 0; an unknown option or a missing
# value is one message naming the command plus a "Try ... --help" hint on
# stderr, exit 2; "--opt=value" and "--opt value" give the same result;
# --version prints PD_VERSION_STRING.
set -u
LC_ALL=C # getopt's messages, untranslated
export LC_ALL
BUILD=${BUILD:-build}
TESTS_DIR=${TESTS_DIR:-tests}
P=$(cd "$BUILD" && pwd)/paddiser
PROBE=$(cd "$BUILD" && pwd)/paddiser-probe
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "cli_options: $*" >&2; exit 1; }

# "paddiser sim run" -> the binary and the words after it
run_cmd() { # CMD ARGS...
    cmd=$1
    shift
    case $cmd in
    paddiser-probe*) bin=$PROBE; words=${cmd#paddiser-probe} ;;
    *) bin=$P; words=${cmd#paddiser} ;;
    esac
    # shellcheck disable=SC2086 # the words of the command split on purpose
    "$bin" $words "$@" >"$T/out" 2>"$T/err"
}

COMMANDS="paddiser
paddiser bench
paddiser find
paddiser report
paddiser sim
paddiser sim tiers
paddiser sim profile
paddiser sim run
paddiser sim study
paddiser sim gen-training
paddiser sim verify
paddiser sim sampling
paddiser sim runtime
paddiser model
paddiser model train
paddiser model eval
paddiser model split
paddiser model gen-synthetic
paddiser model calibrate-stencil
paddiser model calibrate-random
paddiser plan
paddiser tiers
paddiser-probe
paddiser-probe cpu
paddiser-probe gpu
paddiser-probe io
paddiser-probe resolve
paddiser-probe block
paddiser-probe start
paddiser-probe stop"

n=0
while IFS= read -r cmd; do
    for h in --help -h; do
        run_cmd "$cmd" "$h"
        rc=$?
        [ $rc -eq 0 ] || fail "$cmd $h: exit $rc, want 0: $(cat "$T/err")"
        head -n 1 "$T/out" | grep -qE "^usage: $cmd( |\$)" ||
            fail "$cmd $h: first line is not 'usage: $cmd ...': $(head -n 1 "$T/out")"
        [ ! -s "$T/err" ] || fail "$cmd $h: noise on stderr: $(cat "$T/err")"
    done
    # its own help, not its parent's: every option listed once per line
    grep -q -- "-h, --help" "$T/out" || fail "$cmd --help does not list -h, --help"

    run_cmd "$cmd" --no-such-option
    rc=$?
    [ $rc -eq 2 ] || fail "$cmd --no-such-option: exit $rc, want 2"
    [ ! -s "$T/out" ] || fail "$cmd --no-such-option: output on stdout: $(cat "$T/out")"
    grep -qF "$cmd: unrecognized option '--no-such-option'" "$T/err" ||
        fail "$cmd --no-such-option: message does not name the command: $(cat "$T/err")"
    grep -qxF "Try '$cmd --help'." "$T/err" || fail "$cmd --no-such-option: no hint: $(cat "$T/err")"
    [ "$(wc -l <"$T/err")" -eq 2 ] || fail "$cmd --no-such-option: want 2 lines on stderr: $(cat "$T/err")"
    n=$((n + 1))
done <<EOF
$COMMANDS
EOF
[ $n -eq 30 ] || fail "checked $n commands, want 30"

# bench --summarize has its own help too
"$P" bench --summarize="$T" --help >"$T/out" 2>"$T/err" || fail "bench --summarize=DIR --help failed"
grep -q "^usage: paddiser bench --summarize" "$T/out" || fail "bench --summarize help: $(cat "$T/out")"
# an option's value that is exactly --help or -h asks for help, not a file named --help
for h in --help -h; do
    "$P" bench --summarize $h >"$T/out" 2>"$T/err" || fail "bench --summarize $h: exit $?: $(cat "$T/err")"
    grep -q "^usage: paddiser bench --summarize" "$T/out" || fail "bench --summarize $h: $(cat "$T/out")"
    [ ! -s "$T/err" ] || fail "bench --summarize $h: noise on stderr: $(cat "$T/err")"
    "$P" sim run --profile $h >"$T/out" 2>"$T/err" || fail "sim run --profile $h: exit $?"
    grep -q "^usage: paddiser sim run" "$T/out" || fail "sim run --profile $h: $(head -n 1 "$T/out")"
done

# missing values and bad values: exit 2, the command and the option named
missing() { # CMD OPTION [ARGS...]: OPTION given last, without its value
    cmd=$1
    opt=$2
    shift 2
    run_cmd "$cmd" "$@" "$opt"
    rc=$?
    [ $rc -eq 2 ] || fail "$cmd $* $opt: exit $rc, want 2"
    grep -q "^$cmd: option.*requires an argument" "$T/err" || fail "$cmd $opt: $(cat "$T/err")"
    grep -qxF "Try '$cmd --help'." "$T/err" || fail "$cmd $opt: no hint: $(cat "$T/err")"
}
missing "paddiser sim run" --capacity -w bfs
missing "paddiser sim study" -o
missing "paddiser model train" --rounds "$T/none.csv"
missing "paddiser bench" --workdir study.yaml
missing "paddiser report" -o "$T"
missing "paddiser plan" --step "$T/p.json"
missing "paddiser-probe cpu" --attempt --dir "$T"
missing "paddiser-probe block" --dir --cpu
missing "paddiser-probe start" --dir --cpu
missing "paddiser-probe stop" --attempt --dir "$T"
bad() { # MESSAGE CMD ARGS...
    msg=$1
    cmd=$2
    shift 2
    run_cmd "$cmd" "$@"
    rc=$?
    [ $rc -eq 2 ] || fail "$cmd $*: exit $rc, want 2"
    grep -qF -- "$cmd: $msg" "$T/err" || fail "$cmd $*: want '$cmd: $msg', got '$(cat "$T/err")'"
}
bad "--rounds must be an integer in 1..100000, got 'x'" "paddiser model train" d.csv -o m.json --rounds=x
bad "--holdout must be a number in [0, 0.9], got '2'" "paddiser model split" d.csv --holdout 2
bad "--step must be a number in [0.0001, 1], got '0'" "paddiser plan" p.json --step=0
bad "--parallel must be an integer in 1..4096, got '0'" "paddiser bench" s.yaml --parallel 0
bad "--ways must be an integer in 1..4194304, got '-1'" "paddiser model calibrate-stencil" -o x --ways=-1
bad "--reps must be an integer in 1..4194304, got '0'" "paddiser model calibrate-random" -o x --reps 0
bad "--interval must be a number in [0, 86400], got '-1'" "paddiser-probe cpu" --attempt 1 --interval=-1
bad "--samples must be an integer in 1.." "paddiser-probe io" --attempt 1 --io-path / --samples 0
bad "unexpected argument 'extra'" "paddiser tiers" extra
bad "unexpected argument 'extra'" "paddiser sim verify" extra
bad "unrecognized option '--capacity=0.5'" "paddiser sim verify" --capacity=0.5
bad "unrecognized option '--io-path'" "paddiser-probe cpu" --attempt 1 --io-path /

# --opt=value and --opt value give the same result
same() { # WHAT FILE-A FILE-B
    cmp -s "$2" "$3" || fail "$1: --opt=value and --opt value differ: $(diff "$2" "$3" | head -n 5)"
}
"$P" model gen-synthetic -o - --regions 3 --placements 2 --seed 5 >"$T/g1" || fail "gen-synthetic"
"$P" model gen-synthetic --output=- --regions=3 --placements=2 --seed=5 >"$T/g2" || fail "gen-synthetic ="
same "model gen-synthetic" "$T/g1" "$T/g2"
"$P" model gen-synthetic --seed 6 --regions 3 --placements 2 -o - >"$T/g3"
cmp -s "$T/g1" "$T/g3" && fail "model gen-synthetic: --seed was ignored"

cat >"$T/p.json" <<'J'
{"capacity": 100,
 "tasks": [{"name": "a", "time": [[0, 10], [1, 2]], "bytes": [[0, 0], [1, 100]]},
           {"name": "b", "time": [[0, 6], [1, 2]], "bytes": [[0, 0], [1, 100]]}]}
J
"$P" plan "$T/p.json" --planner greedy --step 0.25 --json >"$T/p1" || fail "plan"
"$P" plan --planner=greedy --step=0.25 --json "$T/p.json" >"$T/p2" || fail "plan ="
same "plan" "$T/p1" "$T/p2"
grep -q '"exact"' "$T/p1" && fail "plan --planner greedy ran exact"

fixture=$TESTS_DIR/fixtures/report/run_001
"$P" report "$fixture" -o "$T/r1.html" >/dev/null || fail "report -o"
"$P" report --output="$T/r2.html" "$fixture" >/dev/null || fail "report --output="
"$P" report "$fixture" --output "$T/r3.html" >/dev/null || fail "report --output"
same "report" "$T/r1.html" "$T/r2.html"
same "report" "$T/r1.html" "$T/r3.html"

"$P" sim profile -w bfs -i tiny -r 1 -o "$T/prof.json" >/dev/null || fail "sim profile"
"$P" sim run -p "$T/prof.json" -t cxl -c 0.3 -P greedy --metrics "$T/m1.json" >"$T/s1" || fail "sim run"
"$P" sim run --profile="$T/prof.json" --tier=cxl --capacity=0.3 --policy=greedy --metrics="$T/m2.json" >"$T/s2" ||
    fail "sim run ="
same "sim run" "$T/s1" "$T/s2"
same "sim run --metrics" "$T/m1.json" "$T/m2.json"
grep -q '"policy": "greedy"' "$T/m1.json" || fail "sim run: --policy greedy not in the metrics"

FX=$TESTS_DIR/fixtures/bench/iops
(cd "$T" && "$P" bench --dry-run --workdir wd "$FX/conditional.yaml" >"$T/b1" 2>&1) || fail "bench --dry-run"
(cd "$T" && "$P" bench --dry-run --workdir=wd "$FX/conditional.yaml" >"$T/b2" 2>&1) || fail "bench --workdir="
same "bench" "$T/b1" "$T/b2"

"$PROBE" resolve --io-path "$T" --host h1 >"$T/q1" 2>/dev/null || fail "probe resolve"
"$PROBE" resolve --io-path="$T" --host=h1 >"$T/q2" 2>/dev/null || fail "probe resolve ="
same "paddiser-probe resolve" "$T/q1" "$T/q2"
grep -q '"hostname": "h1"' "$T/q1" || fail "probe resolve: --host ignored"

"$PROBE" block --dir /w/rep --cpu --io-path /scratch --interval 0.5 --probe /opt/paddiser-probe >"$T/k1" ||
    fail "probe block"
"$PROBE" block --dir=/w/rep --cpu --io-path=/scratch --interval=0.5 --probe=/opt/paddiser-probe >"$T/k2" ||
    fail "probe block ="
same "paddiser-probe block" "$T/k1" "$T/k2"
grep -q -- "--interval 0.5" "$T/k1" || fail "probe block: --interval ignored"

mkdir "$T/rep"
touch "$T/rep/__iops_trace_running.a1" "$T/rep/__iops_trace_running.a2"
"$PROBE" cpu --dir "$T/rep" --attempt a1 --host h1 --interval 0 --samples 2 || fail "probe cpu"
"$PROBE" cpu --dir="$T/rep" --attempt=a2 --host=h2 --interval=0 --samples=2 || fail "probe cpu ="
for f in h1_a1 h2_a2; do
    [ -s "$T/rep/__iops_trace_$f.csv" ] || fail "probe cpu: no __iops_trace_$f.csv: $(ls "$T/rep")"
done
[ "$(head -n 1 "$T/rep/__iops_trace_h1_a1.csv")" = "$(head -n 1 "$T/rep/__iops_trace_h2_a2.csv")" ] ||
    fail "probe cpu: different headers"

# --version
V=$(sed -n 's/^#define PD_VERSION_STRING "\(.*\)"$/\1/p' "$TESTS_DIR/../include/paddiser.h")
[ -n "$V" ] || fail "no PD_VERSION_STRING in include/paddiser.h"
[ "$("$P" --version)" = "paddiser $V" ] || fail "paddiser --version: $("$P" --version)"
[ "$("$PROBE" --version)" = "paddiser-probe $V" ] || fail "paddiser-probe --version: $("$PROBE" --version)"
exit 0
