#include "tests/mpi/accumulate/datatypes.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "tests/mpi/accumulate/job.hpp"

namespace shim::test::accumulate {

namespace {

std::map<std::pair<std::string, int>, std::unique_ptr<Layout>> layouts;

}  // namespace

const Layout& layout(const TypeInfo& t, Shape shape) {
  auto& slot = layouts[{t.name, static_cast<int>(shape)}];
  if (slot) return *slot;
  slot = std::make_unique<Layout>();
  Layout& l = *slot;
  const auto s = static_cast<MPI_Aint>(t.size);
  MPI_Datatype dt = MPI_DATATYPE_NULL;
  std::vector<MPI_Aint> units;
  switch (shape) {
    case Shape::Basic:
      l = {t.name, t.dt, {0}, s, false};
      return l;
    case Shape::Vector3s2:
      PMPI_Type_vector(3, 1, 2, t.dt, &dt);
      l.name = std::string("vector(3,1,2) of ") + t.name;
      units = {0, 2, 4};
      l.extent = 5 * s;
      break;
    case Shape::Resized2:
    case Shape::Resized3: {
      const int k = shape == Shape::Resized2 ? 2 : 3;
      PMPI_Type_create_resized(t.dt, 0, k * s, &dt);
      l.name = std::string(t.name) + " resized to extent " + str(k * s);
      units = {0};
      l.extent = k * s;
      break;
    }
    case Shape::IndexedA: {
      const int lengths[3] = {2, 1, 3}, displs[3] = {0, 5, 7};
      PMPI_Type_indexed(3, lengths, displs, t.dt, &dt);
      l.name = std::string("indexed{2@0,1@5,3@7} of ") + t.name;
      units = {0, 1, 5, 7, 8, 9};
      l.extent = 10 * s;
      break;
    }
    case Shape::IndexedB: {
      const int lengths[3] = {1, 2, 3}, displs[3] = {0, 3, 6};
      PMPI_Type_indexed(3, lengths, displs, t.dt, &dt);
      l.name = std::string("indexed{1@0,2@3,3@6} of ") + t.name;
      units = {0, 3, 4, 6, 7, 8};
      l.extent = 9 * s;
      break;
    }
    case Shape::Permuted3: {
      // Typemap order is not memory order: MPI pairs elements in the former.
      const int lengths[3] = {1, 1, 1}, displs[3] = {2, 0, 1};
      PMPI_Type_indexed(3, lengths, displs, t.dt, &dt);
      l.name = std::string("indexed{1@2,1@0,1@1} of ") + t.name;
      units = {2, 0, 1};
      l.extent = 3 * s;
      break;
    }
    case Shape::SubarrayC: {
      // Rows 1-2, columns 1-2 of a 3 x 4 array in C order: ARMCI-MPI's
      // strided patches (Global Arrays) are subarrays like this one.
      const int sizes[2] = {3, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
      PMPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, t.dt, &dt);
      l.name = std::string("subarray 2x2 at (1,1) of 3x4, C order, of ") + t.name;
      units = {5, 6, 9, 10};
      l.extent = 12 * s;
      break;
    }
    case Shape::SubarrayF3: {
      // A 1 x 2 x 2 block at (1,1,0) of a 2 x 3 x 2 array in Fortran order:
      // element (i,j,k) at i + 2j + 6k, the first index fastest.
      const int sizes[3] = {2, 3, 2}, subsizes[3] = {1, 2, 2}, starts[3] = {1, 1, 0};
      PMPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, t.dt, &dt);
      l.name = std::string("subarray 1x2x2 at (1,1,0) of 2x3x2, Fortran order, of ") + t.name;
      units = {3, 5, 9, 11};
      l.extent = 12 * s;
      break;
    }
    case Shape::VectorOfContig2: {
      // Nested: two pairs of elements, the second a pair's extent after the
      // first's end.
      MPI_Datatype pair = MPI_DATATYPE_NULL;
      PMPI_Type_contiguous(2, t.dt, &pair);
      PMPI_Type_vector(2, 1, 2, pair, &dt);
      PMPI_Type_free(&pair);
      l.name = std::string("vector(2,1,2) of contiguous(2) of ") + t.name;
      units = {0, 1, 4, 5};
      l.extent = 6 * s;
      break;
    }
    case Shape::IndexedOfVector: {
      // Nested and permuting: the block at 2 vector extents comes first.
      MPI_Datatype strided = MPI_DATATYPE_NULL;
      PMPI_Type_vector(2, 1, 2, t.dt, &strided);
      const int lengths[2] = {1, 1}, displs[2] = {2, 0};
      PMPI_Type_indexed(2, lengths, displs, strided, &dt);
      PMPI_Type_free(&strided);
      l.name = std::string("indexed{1@2,1@0} of vector(2,1,2) of ") + t.name;
      units = {6, 8, 0, 2};
      l.extent = 9 * s;
      break;
    }
    case Shape::StructOfPairAndOne: {
      // A record: one element at 4, then a pair at 0 (a struct's members
      // in typemap order, not memory order).
      MPI_Datatype pair = MPI_DATATYPE_NULL;
      PMPI_Type_contiguous(2, t.dt, &pair);
      const int lengths[2] = {1, 1};
      const MPI_Aint displs[2] = {4 * s, 0};
      const MPI_Datatype members[2] = {t.dt, pair};
      PMPI_Type_create_struct(2, lengths, displs, members, &dt);
      PMPI_Type_free(&pair);
      l.name = std::string("struct{1@4, contiguous(2)@0} of ") + t.name;
      units = {4, 0, 1};
      l.extent = 5 * s;
      break;
    }
    case Shape::Contig2:
      PMPI_Type_contiguous(2, t.dt, &dt);
      l.name = std::string("contiguous(2) of ") + t.name;
      units = {0, 1};
      l.extent = 2 * s;
      break;
  }
  PMPI_Type_commit(&dt);
  l.dt = dt;
  l.derived = true;
  for (MPI_Aint u : units) l.offsets.push_back(u * s);
  int size = 0, basic_size = 0;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_size(dt, &size);
  PMPI_Type_size(t.dt, &basic_size);
  PMPI_Type_get_extent(dt, &lb, &extent);
  if (size != static_cast<int>(l.offsets.size()) * basic_size || lb != 0 || extent != l.extent)
    test_bug(l.name + ": MPI says size " + str(size) + " extent " + str(extent));
  return l;
}

void free_layouts() {
  for (auto& [key, l] : layouts)
    if (l->derived) PMPI_Type_free(&l->dt);
  layouts.clear();
}

std::vector<MPI_Aint> element_offsets(const Layout& l, MPI_Count count) {
  std::vector<MPI_Aint> out;
  for (MPI_Count k = 0; k < count; ++k)
    for (MPI_Aint off : l.offsets) out.push_back(static_cast<MPI_Aint>(k) * l.extent + off);
  return out;
}

MPI_Aint span_bytes(const Layout& l, MPI_Count count, std::size_t element_size) {
  if (count == 0) return 0;
  return static_cast<MPI_Aint>(count - 1) * l.extent + *std::max_element(l.offsets.begin(), l.offsets.end()) +
         static_cast<MPI_Aint>(element_size);
}

}  // namespace shim::test::accumulate
