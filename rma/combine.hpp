// The arithmetic of the accumulate family on packed elements: the same code
// runs in the origin process (same-node targets) and in the node's server
// (shipped operations), so every path computes alike.
#pragma once

#include <mpi.h>

namespace shim::rma {

// target[i] = origin[i] op target[i] for `count` packed elements of the
// predefined type `basic`, for an op MPICH takes on that type
// (op_acceptance.hpp). MPI_SUCCESS or an MPI error code.
int combine(MPI_Op op, MPI_Datatype basic, const void* origin, void* target, MPI_Count count);

// Compare-and-swap of one element of `bytes` bytes: target takes `origin`
// when it equals `compare`; `old` receives target's previous value.
void compare_and_swap(const void* origin, const void* compare, void* target, void* old, int bytes);

}  // namespace shim::rma
