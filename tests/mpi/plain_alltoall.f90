! The Fortran flavour (use mpi): built with mpif90, not linked to shim.
! MPICH's Fortran bindings call the C MPI_Alltoall, which is what shim
! interposes.
program plain_alltoall
  use mpi
  implicit none
  integer, parameter :: n = 5
  integer :: ierr, rank, nprocs, s, i, calls, bad, total
  integer, allocatable :: isend(:), irecv(:)
  double precision, allocatable :: dsend(:), drecv(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(isend(n * nprocs), irecv(n * nprocs), dsend(n * nprocs), drecv(n * nprocs))
  calls = 0
  bad = 0
  do s = 0, nprocs - 1
    do i = 1, n
      isend(s * n + i) = rank * 100000 + s * 100 + i
      dsend(s * n + i) = rank + s / 8.0d0 + i
    end do
  end do
  call MPI_Alltoall(isend, n, MPI_INTEGER, irecv, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  calls = calls + 1
  call MPI_Alltoall(dsend, n, MPI_DOUBLE_PRECISION, drecv, n, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  calls = calls + 1
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, isend, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  calls = calls + 1
  do s = 0, nprocs - 1
    do i = 1, n
      if (irecv(s * n + i) /= s * 100000 + rank * 100 + i) bad = bad + 1
      if (isend(s * n + i) /= s * 100000 + rank * 100 + i) bad = bad + 1
      if (drecv(s * n + i) /= s + rank / 8.0d0 + i) bad = bad + 1
    end do
  end do
  deallocate(isend, irecv, dsend, drecv)
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0)', 'plain_alltoall (Fortran mpi): calls=', calls, ' wrong=', total
  call MPI_Finalize(ierr)
  if (total /= 0) stop 1
end program plain_alltoall
