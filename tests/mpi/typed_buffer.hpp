// Buffers for datatype tests: room for `elements` elements of a datatype with
// margins around its true extent (negative lower bounds, holes), filled with
// a known pattern, so a comparison of whole buffers also proves that holes
// were left alone.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace shim::test {

constexpr unsigned char kUntouched = 0xA5;

inline unsigned char pattern(int rank, std::size_t byte) {
  return static_cast<unsigned char>(rank * 131 + byte * 7 + 1);
}

struct TypedBuffer {
  std::vector<unsigned char> bytes;
  std::size_t origin = 0;  // offset of the MPI buffer address in `bytes`

  TypedBuffer(MPI_Datatype type, MPI_Count elements) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    const MPI_Aint span = elements > 0 ? (elements - 1) * extent + true_lb + true_extent : 0;
    origin = 64 + static_cast<std::size_t>(std::max<MPI_Aint>(0, -true_lb));
    bytes.assign(origin + static_cast<std::size_t>(std::max<MPI_Aint>(span, 0)) + 64, kUntouched);
  }
  void* data() { return bytes.data() + origin; }
  void fill(int rank) {
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = pattern(rank, i);
  }
};

}  // namespace shim::test
