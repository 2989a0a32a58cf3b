#!/bin/sh
# `paddiser run`, Fortran OpenMP (issue #14): a program built with gfortran
# -fopenmp calls the same libgomp entry points as C, so under
# libpaddiser-preload.so its output is unchanged and each thread of each of
# its two regions (a parallel do with a reduction; a region with a dynamic
# do and an explicit barrier) is a task, with a sync point after each.
# Skipped (with a message) without gfortran, unless RUN_OMP_REQUIRED=1
# (make check-run-omp installs it).
set -eu
NAME=run_omp_fortran
. "${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}/lib_run_omp.sh"
command -v gfortran >/dev/null 2>&1 || missing "no gfortran"

gfortran -O2 -fopenmp -o "$tmp/regions" "$FIX/omp_regions.f90" || fail "cannot build omp_regions.f90"
export OMP_PROC_BIND=false
run_pair fortran "$tmp/regions"
grep -q '^ *fortran: s=400800000 t=2401600$' "$tmp/fortran.out" || fail "wrong result: $(cat "$tmp/fortran.out")"
expect_tasks fortran "0 1 2 64 65 66"
expect_count fortran regions "$(regions_of fortran)" 2
expect_count fortran "sync points" "$(syncs_of fortran)" 4
echo "run_omp_fortran: ok"
