#include "common/datatype_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
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

bool visit_parts(MPI_Datatype type, const std::function<bool(MPI_Datatype)>& visit, int& rc) {
  MPI_Count ints = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  rc = PMPI_Type_get_envelope_c(type, &ints, &addresses, &counts, &types, &combiner);
  if (rc != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
      combiner == MPI_COMBINER_F90_INTEGER) {
    return visit(type);
  }
  std::vector<int> int_args(static_cast<std::size_t>(ints));
  std::vector<MPI_Aint> address_args(static_cast<std::size_t>(addresses));
  std::vector<MPI_Count> count_args(static_cast<std::size_t>(counts));
  std::vector<MPI_Datatype> parts(static_cast<std::size_t>(types));
  rc = PMPI_Type_get_contents_c(type, ints, addresses, counts, types, int_args.data(), address_args.data(),
                                count_args.data(), parts.data());
  if (rc != MPI_SUCCESS) return false;
  bool go = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // A struct repeats its parts; each distinct one is looked into once.
    const auto before = parts.begin() + static_cast<std::ptrdiff_t>(i);
    if (go && std::find(parts.begin(), before, parts[i]) == before) go = visit_parts(parts[i], visit, rc);
  }
  // get_contents hands out a new reference for every derived part listed.
  for (MPI_Datatype& part : parts) {
    if (predefined_type(part)) continue;
    const int freed = PMPI_Type_free(&part);
    if (rc == MPI_SUCCESS) rc = freed;
  }
  return go && rc == MPI_SUCCESS;
}

// Whether the basic elements of `type` all have one size (pair types
// counted as their two members; MPI_LB and MPI_UB, markers of size 0, not
// at all).
bool same_element_sizes(MPI_Datatype type) {
  MPI_Count size = 0;
  bool same = true;
  const auto element = [&size, &same](MPI_Datatype basic) {
    MPI_Count bytes = 0;
    if (PMPI_Type_size_c(basic, &bytes) != MPI_SUCCESS) return same = false;
    if (bytes == 0) return true;
    if (size == 0) size = bytes;
    same = same && size == bytes;
    return same;
  };
  const auto members = [&element](MPI_Datatype basic) {
    if (basic == MPI_FLOAT_INT) return element(MPI_FLOAT) && element(MPI_INT);
    if (basic == MPI_DOUBLE_INT) return element(MPI_DOUBLE) && element(MPI_INT);
    if (basic == MPI_LONG_INT) return element(MPI_LONG) && element(MPI_INT);
    if (basic == MPI_SHORT_INT) return element(MPI_SHORT) && element(MPI_INT);
    if (basic == MPI_LONG_DOUBLE_INT) return element(MPI_LONG_DOUBLE) && element(MPI_INT);
    return element(basic);
  };
  return visit_predefined_parts(type, members) == MPI_SUCCESS && same;
}

// The answers for derived types, kept on the type: an alltoall asks on
// every call, and reading a type's contents allocates and frees handles.
std::mutex g_answers_mutex;
int g_answers_keyval = MPI_KEYVAL_INVALID;
constexpr std::intptr_t kSameSizes = 1;
constexpr std::intptr_t kMixedSizes = 2;

}  // namespace

int visit_predefined_parts(MPI_Datatype type, const std::function<bool(MPI_Datatype)>& visit) {
  int rc = MPI_SUCCESS;
  visit_parts(type, visit, rc);
  return rc;
}

bool mixes_element_sizes(MPI_Datatype type) {
  if (predefined_type(type)) return !same_element_sizes(type);
  std::lock_guard lock(g_answers_mutex);
  if (g_answers_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &g_answers_keyval, nullptr) != MPI_SUCCESS) {
    return !same_element_sizes(type);
  }
  void* cached = nullptr;
  int found = 0;
  if (PMPI_Type_get_attr(type, g_answers_keyval, &cached, &found) == MPI_SUCCESS && found) {
    return reinterpret_cast<std::intptr_t>(cached) == kMixedSizes;
  }
  const bool mixed = !same_element_sizes(type);
  // Not cached, the answer is only asked again.
  static_cast<void>(
      PMPI_Type_set_attr(type, g_answers_keyval, reinterpret_cast<void*>(mixed ? kMixedSizes : kSameSizes)));
  return mixed;
}

void free_datatype_answers_keyval() {
  std::lock_guard lock(g_answers_mutex);
  // Types still alive keep the keyval until they go (MPI's rule for keyvals).
  if (g_answers_keyval != MPI_KEYVAL_INVALID) static_cast<void>(PMPI_Type_free_keyval(&g_answers_keyval));
}

}  // namespace shim
