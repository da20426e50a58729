// Caller-computes (the PNNL study's other scheme for one-sided atomic
// reduction): lock the target exclusively, get, compute here, put back,
// unlock. Every operation of the window takes this path, so MPI's exclusive
// lock is what makes the family atomic.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "rma/accumulate_call.hpp"
#include "rma/datatype_layout.hpp"

namespace shim::rma {

// `window`: a window over the same memory with disp_unit 1, kept apart from
// the user's so its lock epochs never collide with the user's.
// `target_offset` in bytes; `stream` the packed origin elements (bytes of
// them); `old_stream`, if given, receives the target's previous contents.
int apply_caller(MPI_Win window, const AccumulateCall& call, MPI_Aint target_offset, const DatatypeLayout& target,
                 const unsigned char* stream, std::int64_t bytes, unsigned char* old_stream);

}  // namespace shim::rma
