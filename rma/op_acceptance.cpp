#include "rma/op_acceptance.hpp"

#include <map>
#include <utility>

// SHIM_REDUCTIONS and SHIM_COMPARE_AND_SWAP, generated at build time.
#include "mpich_op_table.inc"

namespace shim::rma {

namespace {

struct Reduction {
  MPI_Op op;
  MPI_Datatype type;
  int error_class;
};
struct CompareAndSwap {
  MPI_Datatype type;
  int error_class;
};

constexpr Reduction kReductions[] = {SHIM_REDUCTIONS};
constexpr CompareAndSwap kCompareAndSwap[] = {SHIM_COMPARE_AND_SWAP};

// Looked up on every call of the family.
const std::map<std::pair<MPI_Op, MPI_Datatype>, int>& reduction_classes() {
  static const auto classes = [] {
    std::map<std::pair<MPI_Op, MPI_Datatype>, int> by_pair;
    for (const Reduction& r : kReductions) by_pair[{r.op, r.type}] = r.error_class;
    return by_pair;
  }();
  return classes;
}

}  // namespace

bool accumulate_family_op(MPI_Op op) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return true;
  for (const Reduction& r : kReductions) {
    if (r.op == op) return true;
  }
  return false;
}

int check_op(MPI_Op op, MPI_Datatype basic, bool fetching) {
  if (op == MPI_REPLACE) return MPI_SUCCESS;
  if (op == MPI_NO_OP) return fetching ? MPI_SUCCESS : MPI_ERR_OP;
  const auto& classes = reduction_classes();
  const auto found = classes.find({op, basic});
  return found == classes.end() ? MPI_ERR_OP : found->second;
}

int check_compare_and_swap(MPI_Datatype basic) {
  for (const CompareAndSwap& c : kCompareAndSwap) {
    if (c.type == basic) return c.error_class;
  }
  return MPI_ERR_TYPE;
}

}  // namespace shim::rma
