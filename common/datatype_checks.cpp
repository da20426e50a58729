#include "common/datatype_checks.hpp"

#include <algorithm>
#include <vector>

#include "common/local_comm.hpp"

namespace shim {

// (The large-count form: MPICH refuses the int form for a datatype built
// with large counts, through the error handler.)
bool predefined_type(MPI_Datatype type) {
  MPI_Count ints = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  return PMPI_Type_get_envelope_c(type, &ints, &addresses, &counts, &types, &combiner) == MPI_SUCCESS &&
         (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
          combiner == MPI_COMBINER_F90_INTEGER);
}

// (The large-count form: with the int form a type of 2 GiB or more answered
// "not committed", so the rank that passed it left a collective to MPI while
// ranks that described the same message in smaller elements ran shim's.)
bool committed_type(MPI_Datatype type) {
  MPI_Count bytes = 0;
  return type != MPI_DATATYPE_NULL && PMPI_Pack_size_c(1, type, local_comm(), &bytes) == MPI_SUCCESS;
}

bool null_buffer_rejected(const void* buffer, MPI_Count count, MPI_Datatype type) {
  if (buffer != nullptr || count == 0) return false;
  if (predefined_type(type)) return true;
  MPI_Count true_lb = 0, true_extent = 0, size = 0;
  if (PMPI_Type_get_true_extent_c(type, &true_lb, &true_extent) != MPI_SUCCESS ||
      PMPI_Type_size_c(type, &size) != MPI_SUCCESS) {
    return true;
  }
  return true_lb == 0 && size > 0;
}

namespace {

// The size of every basic element of `type` so far is `size` (0: none yet);
// false once two differ.
bool same_element_sizes(MPI_Datatype type, MPI_Count& size) {
  const auto element = [&size](MPI_Datatype basic) {
    MPI_Count bytes = 0;
    if (PMPI_Type_size_c(basic, &bytes) != MPI_SUCCESS) return false;
    if (bytes == 0) return true;  // MPI_LB, MPI_UB: markers, not data
    if (size == 0) size = bytes;
    return size == bytes;
  };
  MPI_Count ints = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  if (PMPI_Type_get_envelope_c(type, &ints, &addresses, &counts, &types, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
      combiner == MPI_COMBINER_F90_INTEGER) {
    // The predefined pair types of MPI_MINLOC and MPI_MAXLOC are structs.
    if (type == MPI_FLOAT_INT) return element(MPI_FLOAT) && element(MPI_INT);
    if (type == MPI_DOUBLE_INT) return element(MPI_DOUBLE) && element(MPI_INT);
    if (type == MPI_LONG_INT) return element(MPI_LONG) && element(MPI_INT);
    if (type == MPI_SHORT_INT) return element(MPI_SHORT) && element(MPI_INT);
    if (type == MPI_LONG_DOUBLE_INT) return element(MPI_LONG_DOUBLE) && element(MPI_INT);
    return element(type);
  }
  std::vector<int> int_args(static_cast<std::size_t>(ints));
  std::vector<MPI_Aint> address_args(static_cast<std::size_t>(addresses));
  std::vector<MPI_Count> count_args(static_cast<std::size_t>(counts));
  std::vector<MPI_Datatype> parts(static_cast<std::size_t>(types));
  if (PMPI_Type_get_contents_c(type, ints, addresses, counts, types, int_args.data(), address_args.data(),
                               count_args.data(), parts.data()) != MPI_SUCCESS) {
    return false;
  }
  bool same = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // A struct repeats its parts; each distinct one is looked into once.
    const bool seen = std::find(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i), parts[i]) !=
                      parts.begin() + static_cast<std::ptrdiff_t>(i);
    if (same && !seen) same = same_element_sizes(parts[i], size);
  }
  // get_contents hands out a new reference for every derived part listed.
  for (MPI_Datatype& part : parts) {
    if (!predefined_type(part)) static_cast<void>(PMPI_Type_free(&part));
  }
  return same;
}

}  // namespace

bool mixes_element_sizes(MPI_Datatype type) {
  MPI_Count size = 0;
  return !same_element_sizes(type, size);
}

}  // namespace shim
