// Where a fetching call's result is assembled, packed, until every reply
// that carries a part of it is in; then it is unpacked into the user's
// buffer with the user's result datatype.
#pragma once

#include <mpi.h>

#include <vector>

#include "common/mpi_handle.hpp"

namespace shim::rma {

struct ResultAssembly {
  void keep(void* buffer, MPI_Count count, MPI_Datatype type, std::int64_t packed_bytes);
  // For results that arrive after the call returns: a derived result type
  // is duplicated, so the replies can be unpacked even if the user frees it
  // before completion.
  int hold_type();
  // Unpacks into the user's buffer.
  int finish();

  std::vector<unsigned char> packed;
  int replies_left = 0;
  bool done = false;

 private:
  void* result_ = nullptr;
  MPI_Count count_ = 0;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  OwnedType owned_type_;  // set when type_ is a duplicate
};

}  // namespace shim::rma
