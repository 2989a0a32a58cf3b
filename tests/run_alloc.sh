#!/bin/sh
# paddiser run, allocations (issue #14): an unmodified program that
# allocates through malloc, calloc, realloc, posix_memalign, aligned_alloc,
# memalign, valloc, reallocarray, mmap, munmap (partly) and mremap prints
# the same under `paddiser run` as without it; its large blocks are objects
# named by allocation site ("<program>+0x<offset>#k", the offset resolving
# to the allocating line of tests/run/alloc.c), the same in two runs (ASLR);
# a site's blocks of the next input (freed, allocated again) are the same
# objects (objects.csv: one row per object, a registration per input); the
# hints file gives patterns; small blocks and blocks under --min-bytes stay
# untracked. C++ (operator new) and Fortran (ALLOCATE) allocations are named
# by the program's sites too. A freed tracked block is kept for the next
# allocation it fits (tests/run/keep_freed.c).
set -eu
NAME=run_alloc
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run.sh"
$CC -O1 -g -o "$tmp/alloc" "$TESTS_DIR/run/alloc.c"

"$tmp/alloc" >"$tmp/plain.out"
"$PD" run --backend sim --out "$tmp/o1" -v -- "$tmp/alloc" >"$tmp/run.out" 2>"$tmp/run.err" ||
    { cat "$tmp/run.err"; fail "paddiser run failed"; }
cmp -s "$tmp/plain.out" "$tmp/run.out" || { diff "$tmp/plain.out" "$tmp/run.out"; fail "output differs under paddiser run"; }
grep -q "^paddiser run: register alloc+0x[0-9a-f]*#0: " "$tmp/run.err" || { cat "$tmp/run.err"; fail "no registration in the verbose log"; }

# objects.csv: nine sites, ten objects: pair[] of one site as #0 and #1, each site once
# per input (3), realloc keeps the block's object (its re-registration
# counts), the mapping is registered again after munmap and mremap.
csv="$tmp/o1/objects.csv"
[ "$(head -n 1 "$csv")" = "pid,object,name,bytes,registrations,accesses" ] || { cat "$csv"; fail "objects.csv header"; }
rows=$(tail -n +2 "$csv" | wc -l)
[ "$rows" -eq 10 ] || { cat "$csv"; fail "expected 10 objects, got $rows"; }
tail -n +2 "$csv" | cut -d, -f3 | sed 's/#[0-9]*$//' | sort | uniq -c | awk '$1 == 2 { two++ } END { exit two != 1 }' ||
    { cat "$csv"; fail "expected one site with two live blocks (#0, #1)"; }
tail -n +2 "$csv" | cut -d, -f3 | grep -q '#1$' || { cat "$csv"; fail "no #1 name"; }
regs=$(tail -n +2 "$csv" | cut -d, -f5 | sort -n | tr '\n' ' ')
[ "$regs" = "3 3 3 3 3 3 3 3 6 9 " ] || { cat "$csv"; fail "registrations per object: $regs"; }
# Each site's offset is a line of alloc.c (addr2line, when binutils has it).
# The offset is the call's return address: its last byte (offset - 1) is the
# call itself (clang may give the next instruction no line).
if command -v addr2line >/dev/null 2>&1; then
    for off in $(tail -n +2 "$csv" | cut -d, -f3 | sed 's/^alloc+\(0x[0-9a-f]*\)#.*/\1/' | sort -u); do
        where=$(addr2line -e "$tmp/alloc" "$(printf '%#x' $((off - 1)))")
        case "$where" in *alloc.c:[0-9]*) ;; *) fail "site $off resolves to '$where', not a line of alloc.c";; esac
    done
fi
# The names are the same in a second run (another ASLR layout).
"$PD" run --backend sim --out "$tmp/o2" -- "$tmp/alloc" >/dev/null 2>"$tmp/run2.err" || { cat "$tmp/run2.err"; fail "second run"; }
tail -n +2 "$csv" | cut -d, -f2-5 >"$tmp/names1"
tail -n +2 "$tmp/o2/objects.csv" | cut -d, -f2-5 >"$tmp/names2"
cmp -s "$tmp/names1" "$tmp/names2" || { diff "$tmp/names1" "$tmp/names2"; fail "object names differ between runs"; }
[ -e "$tmp/o1/plan.log" ] && [ -e "$tmp/o1/tasks.csv" ] || fail "plan.log or tasks.csv missing"
# Without -v the runtime's notes are quiet: nothing on stderr.
[ ! -s "$tmp/run2.err" ] || { cat "$tmp/run2.err"; fail "stderr not empty without --verbose"; }

# Hints: the mapping's site is a stream, the #1 block a stride by name.
site_map=$(tail -n +2 "$csv" | awk -F, '$5 == 9 { sub(/#0$/, "", $3); print $3 }')
name_one=$(tail -n +2 "$csv" | cut -d, -f3 | grep '#1$')
printf '# site or name, pattern, elem_size, stride\n%s stream 8\n%s stride 8 4\n' "$site_map" "$name_one" >"$tmp/hints"
"$PD" run --backend sim --hints "$tmp/hints" -v -- "$tmp/alloc" >"$tmp/h.out" 2>"$tmp/h.err" || { cat "$tmp/h.err"; fail "hints run"; }
cmp -s "$tmp/plain.out" "$tmp/h.out" || fail "output differs with hints"
grep -q "register $site_map#0: .*pattern stream)" "$tmp/h.err" || { cat "$tmp/h.err"; fail "hint by site not applied"; }
grep -q "register $name_one: .*pattern stride)" "$tmp/h.err" || { cat "$tmp/h.err"; fail "hint by name not applied"; }
n_unknown=$(grep -c "pattern unknown)" "$tmp/h.err" || true)
[ "$n_unknown" -gt 0 ] || fail "objects without a hint should stay unknown"
echo 'bad line here too many fields' >"$tmp/badhints"
"$PD" run --backend sim --hints "$tmp/badhints" -- "$tmp/alloc" >/dev/null 2>"$tmp/bad.err" || fail "a bad hints line broke the run"
grep -q "badhints:1: expected" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "bad hints line not reported"; }

# --min-bytes: above every block, nothing is registered.
"$PD" run --backend sim --min-bytes 1G -v -- "$tmp/alloc" >"$tmp/m.out" 2>"$tmp/m.err" || fail "--min-bytes run"
cmp -s "$tmp/plain.out" "$tmp/m.out" || fail "output differs with --min-bytes"
! grep -q "register" "$tmp/m.err" || { cat "$tmp/m.err"; fail "registered above --min-bytes"; }
# C++: operator new (libstdc++) is skipped, the site is the program's.
CXX=${CXX:-c++}
if command -v "$CXX" >/dev/null 2>&1 && $CXX -O1 -g -o "$tmp/alloc_new" "$TESTS_DIR/run/alloc_new.cpp" 2>/dev/null; then
    "$PD" run --backend sim -v -- "$tmp/alloc_new" >"$tmp/new.out" 2>"$tmp/new.err" || { cat "$tmp/new.err"; fail "C++ run"; }
    [ "$(cat "$tmp/new.out")" = "655360.0" ] || fail "C++ output '$(cat "$tmp/new.out")'"
    n=$(grep -c "register alloc_new+0x[0-9a-f]*#0: " "$tmp/new.err" || true)
    [ "$n" -eq 2 ] || { cat "$tmp/new.err"; fail "expected 2 registrations named alloc_new+..., got $n"; }
    ! grep -q "register libstdc" "$tmp/new.err" || fail "a site in libstdc++"
else
    echo "run_alloc: no C++ compiler, operator new check skipped"
fi
# Fortran ALLOCATE: two arrays, three inputs, two objects named by the
# program's sites with three registrations each.
FC=${FC:-gfortran}
if command -v "$FC" >/dev/null 2>&1 && $FC -O1 -g -o "$tmp/falloc" "$TESTS_DIR/run/alloc.f90" 2>/dev/null; then
    "$tmp/falloc" 3 >"$tmp/f.plain"
    "$PD" run --backend sim --out "$tmp/fo" -- "$tmp/falloc" 3 >"$tmp/f.out" 2>"$tmp/f.err" || { cat "$tmp/f.err"; fail "Fortran run"; }
    cmp -s "$tmp/f.plain" "$tmp/f.out" || fail "Fortran output differs"
    got=$(tail -n +2 "$tmp/fo/objects.csv" | awk -F, '$3 ~ /^falloc\+0x[0-9a-f]+#0$/ && $5 == 3' | wc -l)
    [ "$got" -eq 2 ] || { cat "$tmp/fo/objects.csv"; fail "Fortran: expected 2 objects of falloc with 3 registrations"; }
else
    echo "run_alloc: no Fortran compiler, ALLOCATE check skipped"
fi
# Kept blocks: an 8 MiB array freed and allocated again from one site is
# the same memory, resident (the rewrites take almost no faults; the first
# write takes 2047), one object with a registration each time; calloc's
# block is zero; a 16 MiB allocation that no kept block fits gives the
# kept one back first (both would pass the program's peak); the 8 MiB
# array after it is the 16 MiB block shrunk in place, resident too; two
# same-sized objects of two sites, freed and allocated again in the other
# order, each get their own block back.
# --keep-freed 0, or a cap below the block: nothing kept.
$CC -O1 -g -o "$tmp/keep" "$TESTS_DIR/run/keep_freed.c"
"$tmp/keep" >"$tmp/k.plain" 2>/dev/null || fail "keep_freed alone"
"$PD" run --backend sim --out "$tmp/ko" -v -- "$tmp/keep" >"$tmp/k.out" 2>"$tmp/k.err" || { cat "$tmp/k.err"; fail "keep_freed run"; }
cmp -s "$tmp/k.plain" "$tmp/k.out" || { cat "$tmp/k.out"; fail "keep_freed output differs under paddiser run"; }
faults=$(sed -n 's/^faults //p' "$tmp/k.err" | tr '\n' ' ')
set -- $faults
[ $# -eq 4 ] && [ "$1" -ge 1024 ] && [ "$2" -lt 256 ] && [ "$3" -lt 256 ] && [ "$4" -lt 256 ] ||
    { cat "$tmp/k.err"; fail "kept block: faults of the four writes '$faults', expected 2047 then under 256"; }
[ "$(grep -c "reuse kept block" "$tmp/k.err")" -eq 7 ] || { cat "$tmp/k.err"; fail "expected 7 reuses (two inputs, calloc, the shrunk block, the first of the two objects, both again)"; }
grep -q "^same site yes" "$tmp/k.err" || { cat "$tmp/k.err"; fail "an object did not get its own kept block back"; }
# -v's summary at exit counts what the lines above show.
nk=$(grep -c "keep freed block" "$tmp/k.err"); ng=$(grep -c "give back kept block" "$tmp/k.err")
grep -q "^paddiser run: freed blocks: $nk kept, 7 reused ([0-9.]* MiB), $ng given back, $((nk - 7 - ng)) still kept$" "$tmp/k.err" ||
    { grep "freed blocks:" "$tmp/k.err"; fail "the summary at exit does not count $nk kept, 7 reused, $ng given back"; }
grep -q "give back kept block" "$tmp/k.err" || { cat "$tmp/k.err"; fail "the larger block did not give the kept one back"; }
grep -q "reuse kept block 0x[0-9a-f]* for 8388608 bytes (167[0-9]* kept)" "$tmp/k.err" ||
    { cat "$tmp/k.err"; fail "the 16 MiB kept block did not serve the 8 MiB array"; }
regs=$(tail -n +2 "$tmp/ko/objects.csv" | cut -d, -f5 | sort -n | tr '\n' ' ')
[ "$regs" = "1 2 7 " ] || { cat "$tmp/ko/objects.csv"; fail "kept blocks: registrations per object '$regs', expected the array site's 7 (3, the larger one, the shrunk one, the pair's two), the other site's 2, calloc's 1"; }
for keep in 0 4M; do
    "$PD" run --backend sim --keep-freed "$keep" -v -- "$tmp/keep" >"$tmp/k0.out" 2>"$tmp/k0.err" || { cat "$tmp/k0.err"; fail "--keep-freed $keep run"; }
    cmp -s "$tmp/k.plain" "$tmp/k0.out" || fail "--keep-freed $keep: output differs"
    ! grep -q "keep freed block" "$tmp/k0.err" || { cat "$tmp/k0.err"; fail "--keep-freed $keep kept an 8 MiB block"; }
done
"$PD" run --keep-freed 1X -- true 2>"$tmp/kbad.err" && fail "--keep-freed 1X accepted"
grep -q -- "--keep-freed must be a size" "$tmp/kbad.err" || { cat "$tmp/kbad.err"; fail "--keep-freed 1X: no clear error"; }
# A double free of a kept block stops the program, as glibc's check would.
"$PD" run --backend sim -- "$tmp/keep" double >/dev/null 2>"$tmp/kd.err" && fail "a double free of a kept block went on"
grep -q "free(0x[0-9a-f]*): the block was freed already (double free); aborting" "$tmp/kd.err" ||
    { cat "$tmp/kd.err"; fail "double free of a kept block: no message"; }
echo "run_alloc: ok"
