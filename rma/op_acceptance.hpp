// Which calls of the accumulate family MPICH accepts, so that shim accepts
// what native MPICH accepts and refuses the rest with MPICH's error class.
// The table is MPICH's own, read from it when shim is built
// (tools/mpich_op_table.cpp), not the standard's:
// - which predefined reduction applies to which predefined type: those
//   MPICH's MPI_Reduce_local applies, the kernel its accumulates run at
//   the target (MPICH 4.0.2 takes MPI_CHAR with MPI_SUM, as a signed char;
//   it leaves MPI_WCHAR out of every reduction);
// - which types MPICH's MPI_Compare_and_swap takes.
// MPI_REPLACE applies to every predefined type; MPI_NO_OP to every type in
// the fetching calls and to none in MPI_Accumulate, as in MPICH.
#pragma once

#include <mpi.h>

namespace shim::rma {

// An op the accumulate family takes at all: a predefined reduction,
// MPI_REPLACE or MPI_NO_OP.
bool accumulate_family_op(MPI_Op op);

// MPI_SUCCESS, or the class MPICH gives for `op` on the predefined type
// `basic` in a fetching call (`fetching`) or an accumulate.
int check_op(MPI_Op op, MPI_Datatype basic, bool fetching);
// MPI_SUCCESS, or the class MPICH's MPI_Compare_and_swap gives for `basic`.
int check_compare_and_swap(MPI_Datatype basic);

}  // namespace shim::rma
