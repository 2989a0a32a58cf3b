! tests/run_alloc.sh: Fortran ALLOCATE reaches malloc from the program's
! own code (not libgfortran): the site is the program's. The number of
! inputs comes from the command line so the loop is not unrolled.
program falloc
  implicit none
  real(8), allocatable :: a(:), b(:)
  integer :: input, n, inputs
  character(len=8) :: arg
  real(8) :: s
  call get_command_argument(1, arg)
  read (arg, *) inputs
  s = 0
  do input = 1, inputs
    n = (1 + input) * 131072
    allocate(a(n), b(n))
    a = 1.0d0
    b = 2.0d0 * a
    s = s + sum(a) + sum(b)
    deallocate(a, b)
  end do
  print '(F12.1)', s
end program falloc
