#!/bin/sh
# paddiser run with threads and processes (issue #14): a thread started by a
# library constructor before the runtime, eight threads allocating
# concurrently after it, fork() while they run (the children allocate large
# blocks: no lock of the hooks is left held), and a fork()+exec'd child
# (preloaded again: its objects are in objects.csv under its own pid) give
# the same output as without paddiser run. With --min-bytes 1 every
# allocation, the C library's and the runtime's own included, goes through
# the registration path: nothing recurses or deadlocks, and no object is
# named after the preload library.
set -eu
NAME=run_threads
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run.sh"
$CC -O1 -g -fPIC -shared -o "$tmp/libearly.so" "$TESTS_DIR/run/early.c" -lpthread
$CC -O1 -g -o "$tmp/threads" "$TESTS_DIR/run/threads.c" -L"$tmp" -learly -Wl,-rpath,"$tmp" -lpthread
$CC -O1 -g -o "$tmp/alloc" "$TESTS_DIR/run/alloc.c"

"$tmp/threads" >"$tmp/plain.out"
grep -q "^forks: 10 of 10$" "$tmp/plain.out" && grep -q "^exec: status 0$" "$tmp/plain.out" ||
    { cat "$tmp/plain.out"; fail "the program itself failed"; }
"$PD" run --backend sim --out "$tmp/o" -- "$tmp/threads" >"$tmp/run.out" 2>"$tmp/run.err" ||
    { cat "$tmp/run.err"; fail "paddiser run failed"; }
cmp -s "$tmp/plain.out" "$tmp/run.out" || { diff "$tmp/plain.out" "$tmp/run.out"; fail "output differs"; }
[ ! -s "$tmp/run.err" ] || { cat "$tmp/run.err"; fail "stderr not empty"; }
# The parent and the exec'd child registered objects (two pids); the
# fork() children without exec did not (the runtime stays the parent's).
pids=$(tail -n +2 "$tmp/o/objects.csv" | cut -d, -f1 | sort -u | wc -l)
[ "$pids" -eq 2 ] || { cat "$tmp/o/objects.csv"; fail "objects.csv has rows of $pids processes, expected 2"; }
tail -n +2 "$tmp/o/objects.csv" | cut -d, -f3 | grep -q '^threads+0x' || fail "no object named by a site in threads"
tail -n +2 "$tmp/o/objects.csv" | cut -d, -f3 | grep -q '^libearly.so+0x' ||
    { cat "$tmp/o/objects.csv"; fail "the early thread's blocks after the start were not tracked"; }

# Every allocation through the hooks' slow path.
"$tmp/alloc" >"$tmp/alloc.out"
"$PD" run --backend sim --min-bytes 1 -v -- "$tmp/alloc" >"$tmp/all.out" 2>"$tmp/all.err" ||
    { tail -n 20 "$tmp/all.err"; fail "--min-bytes 1 run failed"; }
cmp -s "$tmp/alloc.out" "$tmp/all.out" || fail "output differs with --min-bytes 1"
grep -q "register alloc+0x.*: 64 bytes" "$tmp/all.err" || { tail -n 20 "$tmp/all.err"; fail "small block not registered"; }
! grep -q "register libpaddiser-preload" "$tmp/all.err" || fail "the runtime's own allocations were registered"
echo "run_threads: ok"
