// The items of the cases, each defined in the scenario file whose subject it
// is; the cases that combine them are in synchronisation.cpp (the whole
// matrix) and window_kinds.cpp (the subsets for other windows).
#pragma once

#include <memory>

#include "tests/mpi/accumulate/elements.hpp"
#include "tests/mpi/accumulate/plan.hpp"

namespace shim::test::accumulate {

// ops_and_types.cpp: one operation with one type; compare-and-swap on one
// type; count 0 and MPI_PROC_NULL with every call.
std::unique_ptr<Item> matrix_item(const OpInfo& op, const TypeInfo& type);
std::unique_ptr<Item> cas_item(const TypeInfo& type);
std::unique_ptr<Item> empty_item();
// Every operation with every type MPI allows it for, then every
// compare-and-swap type: the share `slice` of `of`.
void add_op_type_items(Case& k, int slice, int of);

// derived_types.cpp: derived origin, target and result datatypes, for the
// share `slice` of `of` of the (operation, type) pairs chosen for them.
std::unique_ptr<Item> derived_item(const OpInfo& op, const TypeInfo& type);
void add_derived_items(Case& k, int slice, int of);

// ordering_and_contention.cpp: one origin's calls to the same elements in
// program order, to one element or to overlapping ranges of datatypes.
std::unique_ptr<Item> ordering_item(const TypeInfo& type, bool overlapping_ranges);

}  // namespace shim::test::accumulate
