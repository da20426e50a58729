! The mpi_f08 flavour. MPICH's mpi_f08 MPI_Init does not call the C
! MPI_Init, so shim starts lazily on the first MPI_Alltoall it sees.
program plain_alltoall_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 3
  integer :: rank, nprocs, s, i, bad, total
  integer, allocatable :: isend(:), irecv(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  allocate(isend(n * nprocs), irecv(n * nprocs))
  bad = 0
  do s = 0, nprocs - 1
    do i = 1, n
      isend(s * n + i) = rank * 100000 + s * 100 + i
    end do
  end do
  call MPI_Alltoall(isend, n, MPI_INTEGER, irecv, n, MPI_INTEGER, MPI_COMM_WORLD)
  do s = 0, nprocs - 1
    do i = 1, n
      if (irecv(s * n + i) /= s * 100000 + rank * 100 + i) bad = bad + 1
    end do
  end do
  deallocate(isend, irecv)
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0)', 'plain_alltoall (Fortran mpi_f08): calls=', 1, ' wrong=', total
  call MPI_Finalize()
  if (total /= 0) stop 1
end program plain_alltoall_f08
