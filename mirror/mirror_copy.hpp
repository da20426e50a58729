// Copies between a mirrored window and a distributed array of the same
// elements over the same processes (Palmer, Nieplocha, Aprà, "Shared Memory Mirroring for Reducing Communication
// Overhead on Commodity Networks", Section 3).
#pragma once

#include "mirror/distributed_array.hpp"
#include "mirror/mirrored_window.hpp"

namespace shim::mirror {

// MPI_SUCCESS, or an error code (with its message) naming the first
// mismatch: element count, datatype, or the processes behind them. Local;
// every process of a collective call reaches the same verdict.
int check_compatible(const char* operation, const MirroredWindow& mirror, const DistributedArray& array);

// Collective: zero every node's copy, each process writes the block it owns
// in the distributed array into its node's copy, then merge: each element
// is owned once in the whole job, so the sum is the distributed array.
int copy_from_distributed(MirroredWindow& mirror, const DistributedArray& array);

// Collective: each process reads its block from its node's copy. No
// network traffic; assumes the node copies are equal (merged).
int copy_to_distributed(MirroredWindow& mirror, DistributedArray& array);

}  // namespace shim::mirror
