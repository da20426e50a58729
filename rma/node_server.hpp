// The communication server of a node (after Yu et al., "Cooperative server
// clustering for a scalable GAS model on petascale Cray XT5 systems"): a thread in the node's
// lowest world rank that receives accumulate requests shipped from other
// nodes, applies them to the node's shared memory under the node's stripe
// locks, and replies. It polls with back-off: a short busy phase after each
// request, then sleeps that double up to the configured maximum, so an idle
// server costs little CPU.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rma/node_memory.hpp"

namespace shim::rma {

class NodeServer {
 public:
  // Starts the thread; `comm` is the server communicator.
  NodeServer(MPI_Comm comm, int poll_max_us);
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;
  // Stops and joins the thread.
  ~NodeServer();

  void add_window(std::uint64_t id, std::shared_ptr<NodeMemory> memory);
  void remove_window(std::uint64_t id);

 private:
  struct PendingReply {
    MPI_Request request;
    std::vector<unsigned char> payload;
  };

  void run();
  // A message holds one or more requests, applied in order.
  void handle(int source, const unsigned char* message, std::int64_t bytes);
  // Applies one request; returns the bytes it occupies.
  std::int64_t handle_one(int source, const unsigned char* request, std::int64_t available);
  void reply(int source, std::vector<unsigned char> payload);
  std::shared_ptr<NodeMemory> window(std::uint64_t id);

  MPI_Comm comm_;
  int poll_max_us_;
  std::atomic<bool> stop_{false};
  mutable std::mutex windows_mutex_;
  std::map<std::uint64_t, std::shared_ptr<NodeMemory>> windows_;
  std::vector<PendingReply> replies_;  // the thread's own
  std::thread thread_;
};

}  // namespace shim::rma
