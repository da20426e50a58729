// Derived datatypes the test describes itself: each shape is built with
// MPI's type constructors and also as the list of its elements' offsets,
// which the model uses; MPI's size and extent must agree with the list.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/mpi/accumulate/elements.hpp"

namespace shim::test::accumulate {

enum class Shape {
  Basic,
  Vector3s2,
  Resized2,
  Resized3,
  IndexedA,
  IndexedB,
  Contig2,
  Permuted3,
  SubarrayC,
  SubarrayF3,
  VectorOfContig2,
  IndexedOfVector,
  StructOfPairAndOne
};

struct Layout {
  std::string name;
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  std::vector<MPI_Aint> offsets;  // of the basic elements in one instance
  MPI_Aint extent = 0;
  bool derived = false;
};

// Built and committed on first use, kept until free_layouts().
const Layout& layout(const TypeInfo& t, Shape shape);
void free_layouts();

// Byte offsets of the basic elements of `count` instances, in order.
std::vector<MPI_Aint> element_offsets(const Layout& l, MPI_Count count);
// Bytes from the first instance's start to the last element's end.
MPI_Aint span_bytes(const Layout& l, MPI_Count count, std::size_t element_size);

}  // namespace shim::test::accumulate
