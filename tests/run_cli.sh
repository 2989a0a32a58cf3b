#!/bin/sh
# paddiser run, the command (issue #14): a program with neither OpenMP nor
# MPI runs as without it (output, stdin and exit status unchanged, nothing
# on stderr); options reach the program's environment; an existing
# LD_PRELOAD is kept after the library; clear messages, exit status 2, for
# a static program ("preloading needs a dynamically linked program"), a
# missing program, a file that is neither ELF nor script, a missing preload
# library and bad option values; a '#!' script runs with a note.
set -eu
NAME=run_cli
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run.sh"
$CC -O1 -o "$tmp/noop" "$TESTS_DIR/run/noop.c"

# A no-op: same stdout, same exit status, empty stderr.
st=0; printf 'abc' | "$tmp/noop" a 'b c' >"$tmp/plain.out" 2>"$tmp/plain.err" || st=$?
[ "$st" -eq 7 ] || fail "the program itself exited $st"
st=0; printf 'abc' | "$PD" run -- "$tmp/noop" a 'b c' >"$tmp/run.out" 2>"$tmp/run.err" || st=$?
[ "$st" -eq 7 ] || { cat "$tmp/run.err"; fail "exit status $st under paddiser run, expected 7"; }
cmp -s "$tmp/plain.out" "$tmp/run.out" || { diff "$tmp/plain.out" "$tmp/run.out"; fail "stdout differs"; }
[ ! -s "$tmp/run.err" ] || { cat "$tmp/run.err"; fail "stderr not empty"; }
# Without "--" and found through PATH as well.
st=0; PATH="$tmp:$PATH" "$PD" run noop a 'b c' </dev/null >"$tmp/path.out" 2>&1 || st=$?
[ "$st" -eq 7 ] && grep -q "^arg 2: b c$" "$tmp/path.out" || { cat "$tmp/path.out"; fail "program from PATH"; }

# The library first, an existing LD_PRELOAD after it.
lib=$(cd "$BUILD" && pwd)/libpaddiser-preload.so
"$PD" run -- "$tmp/noop" env </dev/null >"$tmp/env.out" 2>&1 || true
grep -qx "LD_PRELOAD=$lib" "$tmp/env.out" || { cat "$tmp/env.out"; fail "LD_PRELOAD is not the library"; }
LD_PRELOAD=libm.so.6 "$PD" run -- "$tmp/noop" env </dev/null >"$tmp/env2.out" 2>&1 || true
grep -qx "LD_PRELOAD=$lib:libm.so.6" "$tmp/env2.out" || { cat "$tmp/env2.out"; fail "existing LD_PRELOAD not kept"; }
# The PMU only by default (page protection makes a read(2) into a sampled
# page fail with EFAULT); --sampler and an existing PADDISER_SAMPLER win.
"$PD" run -- env </dev/null >"$tmp/env5.out" 2>&1 || true
grep -qx "PADDISER_SAMPLER=pmu" "$tmp/env5.out" || { cat "$tmp/env5.out"; fail "default sampler is not pmu"; }
"$PD" run --sampler mprotect -- env </dev/null >"$tmp/env3.out" 2>&1 || true
grep -qx "PADDISER_SAMPLER=mprotect" "$tmp/env3.out" || { cat "$tmp/env3.out"; fail "--sampler mprotect"; }
PADDISER_SAMPLER=auto "$PD" run -- env </dev/null >"$tmp/env4.out" 2>&1 || true
grep -qx "PADDISER_SAMPLER=auto" "$tmp/env4.out" || { cat "$tmp/env4.out"; fail "PADDISER_SAMPLER not kept"; }

# Options become the environment the runtime reads.
cat >"$tmp/showenv.sh" <<'SH'
#!/bin/sh
env | grep -E '^PADDISER_(FAST_CAPACITY|BACKEND|PLANNER|RUN_MIN_BYTES|RUN_SYNC_EVERY|RUN_REGIONS|RUN_HINTS|RUN_OUT|TASKS_CSV|PROFILE_STORE)=' | sort
SH
chmod +x "$tmp/showenv.sh"
: >"$tmp/hints"
"$PD" run --fast-capacity 64M --backend sim --planner greedy --min-bytes 2M --sync-every 3 --regions 'app+0x1*,main' --hints "$tmp/hints" \
    --out "$tmp/out" --profile-store "$tmp/store.json" -- "$tmp/showenv.sh" >"$tmp/opts.out" 2>"$tmp/opts.err" || { cat "$tmp/opts.err"; fail "options run"; }
realtmp=$(cd "$tmp" && pwd -P)
for want in PADDISER_FAST_CAPACITY=67108864 PADDISER_BACKEND=sim PADDISER_PLANNER=greedy \
    PADDISER_RUN_MIN_BYTES=2097152 PADDISER_RUN_SYNC_EVERY=3 "PADDISER_RUN_REGIONS=app+0x1*,main" "PADDISER_RUN_HINTS=$realtmp/hints" \
    "PADDISER_RUN_OUT=$realtmp/out" "PADDISER_TASKS_CSV=$realtmp/out/tasks.csv" "PADDISER_PROFILE_STORE=$realtmp/store.json"; do
    grep -qxF "$want" "$tmp/opts.out" || { cat "$tmp/opts.out"; fail "missing $want"; }
done
[ -d "$tmp/out" ] || fail "--out did not create the directory"
grep -q "is a script" "$tmp/opts.err" || { cat "$tmp/opts.err"; fail "no note for a script"; }

# A program whose DT_NEEDED names libmpi gets libpaddiser-preload-mpi.so
# when that exists (here a copy of the plain one, in PADDISER_PRELOAD_DIR),
# else the plain library with a warning.
mkdir "$tmp/fakempi" "$tmp/libs"
printf 'int fake_mpi_symbol(void) { return 3; }\n' >"$tmp/fakempi/mpi.c"
$CC -shared -fPIC -o "$tmp/fakempi/libmpi.so.40" -Wl,-soname,libmpi.so.40 "$tmp/fakempi/mpi.c"
printf 'int fake_mpi_symbol(void);\nint main(void) { return fake_mpi_symbol() == 3 ? 0 : 1; }\n' >"$tmp/fakempi/app.c"
$CC -o "$tmp/fakempi/app" "$tmp/fakempi/app.c" "$tmp/fakempi/libmpi.so.40" -Wl,-rpath,"$tmp/fakempi"
cp "$BUILD/libpaddiser-preload.so" "$tmp/libs/"
PADDISER_PRELOAD_DIR="$tmp/libs" "$PD" run -v -- "$tmp/fakempi/app" >/dev/null 2>"$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "libmpi program, plain library"; }
grep -q "linked with libmpi but libpaddiser-preload-mpi.so was not built" "$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "no warning without the MPI library"; }
grep -q "LD_PRELOAD=$tmp/libs/libpaddiser-preload.so " "$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "plain library not used"; }
cp "$BUILD/libpaddiser-preload.so" "$tmp/libs/libpaddiser-preload-mpi.so"
PADDISER_PRELOAD_DIR="$tmp/libs" "$PD" run -v -- "$tmp/fakempi/app" >/dev/null 2>"$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "libmpi program, MPI library"; }
grep -q "LD_PRELOAD=$tmp/libs/libpaddiser-preload-mpi.so " "$tmp/mpi.err" || { cat "$tmp/mpi.err"; fail "MPI library not chosen"; }
PADDISER_PRELOAD_DIR="$tmp/libs" "$PD" run -v -- "$tmp/noop" </dev/null >/dev/null 2>"$tmp/nompi.err" || true
grep -q "LD_PRELOAD=$tmp/libs/libpaddiser-preload.so " "$tmp/nompi.err" || { cat "$tmp/nompi.err"; fail "MPI library for a program without libmpi"; }

# Errors: status 2 and a message naming the problem.
expect_error() { # expect_error PATTERN CMD...
    pat=$1; shift
    st=0; "$@" </dev/null >"$tmp/e.out" 2>"$tmp/e.err" || st=$?
    [ "$st" -eq 2 ] || { cat "$tmp/e.out" "$tmp/e.err"; fail "'$*' exited $st, expected 2"; }
    grep -q "$pat" "$tmp/e.err" || { cat "$tmp/e.err"; fail "'$*': no message matching '$pat'"; }
}
if $CC -static -O1 -o "$tmp/static" "$TESTS_DIR/run/noop.c" 2>/dev/null; then
    expect_error "preloading needs a dynamically linked program" "$PD" run -- "$tmp/static"
else
    echo "run_cli: no static libc here, static program check skipped"
fi
expect_error "program not found" "$PD" run -- "$tmp/missing"
expect_error "program not found in PATH" "$PD" run -- no-such-program-paddiser
expect_error "sampler must be pmu, mprotect or auto" "$PD" run --sampler pebs -- "$tmp/noop"
printf 'plain text\n' >"$tmp/text"; chmod +x "$tmp/text"
expect_error "neither an ELF program nor a '#!' script" "$PD" run -- "$tmp/text"
mkdir "$tmp/empty"
PADDISER_PRELOAD_DIR="$tmp/empty" expect_error "libpaddiser-preload.so not found" "$PD" run -- "$tmp/noop"
expect_error "backend must be" "$PD" run --backend fast -- "$tmp/noop"
expect_error "planner must be" "$PD" run --planner best -- "$tmp/noop"
expect_error "fast-capacity must be a size" "$PD" run --fast-capacity 12X -- "$tmp/noop"
expect_error "min-bytes must be a positive size" "$PD" run --min-bytes 0 -- "$tmp/noop"
expect_error "sync-every" "$PD" run --sync-every 0 -- "$tmp/noop"
expect_error "profile-store" "$PD" run --profile-store "$tmp/" -- "$tmp/noop"
expect_error "no/such/dir" "$PD" run --profile-store "$tmp/no/such/dir/store.json" -- "$tmp/noop"
expect_error "hints file" "$PD" run --hints "$tmp/no-hints" -- "$tmp/noop"
expect_error "usage: paddiser run" "$PD" run
"$PD" run --help | grep -q "usage: paddiser run" || fail "--help"
echo "run_cli: ok"
