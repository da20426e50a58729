// A communicator's hierarchy: its layout over nodes and the communicators the
// hierarchical algorithms run on. Built once per communicator (collectively,
// inside the first collective call that needs it) and cached by shim/ through
// an attribute; destroying it frees the derived communicators.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "common/mpi_handle.hpp"
#include "topology/layout.hpp"

namespace shim::topo {

class Hierarchy {
 public:
  Hierarchy(const Hierarchy&) = delete;
  Hierarchy& operator=(const Hierarchy&) = delete;

  // node_size > 0: virtual nodes of that many consecutive world ranks.
  // Returns an MPI error code; on error `out` is left empty.
  static int build(MPI_Comm comm, int node_size, std::unique_ptr<Hierarchy>& out);

  const Layout& layout() const { return layout_; }
  int rank() const { return rank_; }
  // Private context (a dup of the user's communicator) for point-to-point
  // steps, so they can never match the application's own messages.
  MPI_Comm shadow() const { return shadow_.get(); }
  MPI_Comm node() const { return node_.get(); }
  // The processes with this process's local rank, ordered by node. Rail 0 is
  // the communicator of node leaders.
  MPI_Comm rail() const { return rail_.get(); }
  bool leader() const { return layout_.local_rank(rank_) == 0; }
  // How nodes were identified, e.g. "virtual nodes of 4 ranks".
  const std::string& node_source() const { return node_source_; }
  // MPI_COMM_WORLD's rank of each rank: the network profile is keyed by it.
  int world_rank(int rank) const { return world_rank_of_[rank]; }

 private:
  Hierarchy() = default;
  Layout layout_;
  int rank_ = 0;
  OwnedComm shadow_;
  OwnedComm node_;
  OwnedComm rail_;
  std::string node_source_;
  std::vector<int> world_rank_of_;
};

}  // namespace shim::topo
