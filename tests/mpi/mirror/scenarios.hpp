// The scenarios mirror_matrix runs on its windows. Each is collective over
// the window's communicator; T is the C++ type of the window's elements (each
// scenario file instantiates the ones mirror_matrix.cpp uses); `thorough`
// adds the rarer ranges and block sizes.
#pragma once

#include "tests/mpi/mirror/job.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

// merges.cpp: a new window; merges after each holder wrote its block (and
// with `both`, after one process wrote the whole copy); inexact
// floating-point sums (MPI_DOUBLE windows) bit-identical everywhere.
template <typename T>
void fresh_checks(const Win& w);
template <typename T>
void merge_rounds(const Win& w, bool both);
void identical_sums(const Win& w);

// patch_and_sparse_merges.cpp
template <typename T>
void patch_rounds(const Win& w, bool thorough);
template <typename T>
void sparse_rounds(const Win& w, bool thorough);

// copies.cpp: to and from a distributed array over the same communicator.
template <typename T>
void copy_rounds(const Win& w, bool thorough);

// local_access.cpp: get/put/acc on any range; `iterations` rounds of
// concurrent accumulates into the same elements.
template <typename T>
void local_access(const Win& w);
template <typename T>
void acc_rounds(const Win& w, int iterations);

// layout_queries.cpp
template <typename T>
void layout_checks(const Win& w);

// errors.cpp: over duplicates of MPI_COMM_WORLD and communicators of its own.
void errors(const Comm& world);

// cxx_wrappers.cpp: over a duplicate of c.
void cxx_wrappers(const Comm& c);

}  // namespace shim::test::mirror
