// Address arithmetic through MPI_Aint, so that user buffers given as
// MPI_BOTTOM (absolute-address datatypes) never see pointer arithmetic on null.
#pragma once

#include <mpi.h>

#include <cstdint>

namespace shim {

inline MPI_Aint address_of(const void* pointer) {
  return static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(pointer));
}
inline void* pointer_at(MPI_Aint address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

}  // namespace shim
