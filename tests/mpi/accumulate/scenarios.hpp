// The scenarios accumulate_matrix runs, in its order; each is collective over
// the communicators it is given and runs on the path (the "shim_accumulate"
// info key) it is given.
#pragma once

#include <string>
#include <vector>

#include "tests/mpi/accumulate/job.hpp"

namespace shim::test::accumulate {

// synchronisation.cpp: the whole matrix under fence and lock_all, and a share
// of it under each other synchronisation mode.
void matrix_under_every_synchronisation(const Comm& world, const std::string& path);

// window_kinds.cpp
void disp_units(const Comm& world, const std::string& path);
void sub_communicators(const std::vector<const Comm*>& comms, const std::string& path);
// MPICH 4.0.2's own MPI_Win_allocate misplaces accesses for sizes that are
// not multiples of the page size: on windows that may be MPICH's own the
// mismatches are counted and reported, not failed.
void odd_sizes(const Comm& c, const std::string& path);
// MPI_Win_create and MPI_Win_allocate_shared (on `shm`, one node's
// processes) with no info key and with a path requested; then path "auto".
void other_window_kinds(const Comm& world, const Comm& shm);

// ordering_and_contention.cpp: exact sums of contended accumulates, and
// accumulate, fetch-and-op and compare-and-swap increments mixed.
void contention(const Comm& c, const std::string& path);
void mixed_increments(const Comm& c, const std::string& path);

}  // namespace shim::test::accumulate
