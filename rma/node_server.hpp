// The communication server of a node (after Yu et al., "Cooperative server
// clustering for a scalable GAS model on petascale Cray XT5 systems", 2010):
// a thread in the node's lowest world rank. It receives messages from the
// origins assigned to it (server_map.hpp) into a direct pool of request
// buffers, and from the other servers of its cluster into a forwarding pool.
// Messages for this node are applied to the node's shared memory under the
// node's stripe locks, and answers go straight to the origin; messages for
// another node of the cluster are forwarded unchanged to that node's server
// (request intervention), within the forwarding credits that server grants.
// Without a credit a message waits in a per-target queue and keeps its
// buffer: that is the back-pressure, and the origin's own credits bound how
// much can wait. The thread polls with back-off: a short busy phase after
// each event, then sleeps that double up to the configured maximum, so an
// idle server costs little CPU.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "rma/credit_line.hpp"
#include "rma/node_memory.hpp"

namespace shim::rma {

struct ServerPlan {
  int poll_max_us = 1000;
  std::int64_t direct_buffers = 0;   // assigned origins x credits
  std::int64_t forward_buffers = 0;  // other servers of the cluster x credits
  std::int64_t buffer_bytes = 16 * 1024;
  int credits = 8;  // towards each target server when forwarding
};

// What a server holds and did; SHIM_STATS reports it.
struct ServerPoolCounters {
  std::int64_t direct_buffer_bytes = 0;
  std::int64_t forward_buffer_bytes = 0;
  std::int64_t peak_buffers_in_use = 0;    // request buffers holding a message not yet released
  std::int64_t messages_direct = 0;        // from origins, applied here
  std::int64_t messages_forwarded = 0;     // from origins, forwarded to another server
  std::int64_t messages_from_servers = 0;  // forwarded here by another server
  std::int64_t distinct_peers = 0;         // processes that sent to this server
  std::int64_t busy_ns = 0;                // handling messages, not polling
};

class NodeServer {
 public:
  // Starts the thread; `comm` is the server communicator.
  NodeServer(MPI_Comm comm, const ServerPlan& plan);
  NodeServer(const NodeServer&) = delete;
  NodeServer& operator=(const NodeServer&) = delete;
  // Stops and joins the thread.
  ~NodeServer();

  void add_window(std::uint64_t id, std::shared_ptr<NodeMemory> memory);
  void remove_window(std::uint64_t id);
  ServerPoolCounters counters() const;

 private:
  struct Slot {
    std::vector<unsigned char> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
    std::int64_t bytes = 0;
    int sender = -1;            // origin (direct pool) or server (forwarding pool)
    std::int64_t sequence = 0;  // among the sender's messages
  };
  struct Pool {
    std::deque<std::size_t> posted;  // oldest first: MPI matches receives in the order they were posted
    int tag = 0;
    std::map<int, ReleaseOrder> senders;
    int credit_tag = 0;
  };
  struct Target {
    CreditLine line;
    std::deque<std::size_t> waiting;                           // slots to forward, oldest first
    std::deque<std::pair<std::int64_t, MPI_Request>> credits;  // asked for, oldest first
  };
  struct Forward {
    std::size_t slot;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  void run();
  bool progress();
  void post(Pool& pool, std::size_t slot);
  bool take_arrival(Pool& pool, bool direct);
  void release(Pool& pool, std::size_t slot);
  void forward_waiting(int target_server);
  // A message holds one or more requests, applied in order.
  void apply(const unsigned char* message, std::int64_t bytes);
  // Applies one request; returns the bytes it occupies.
  std::int64_t apply_one(int origin, const unsigned char* request, std::int64_t available);
  void send(int destination, int tag, std::vector<unsigned char> payload);
  void finish();
  std::shared_ptr<NodeMemory> window(std::uint64_t id);

  MPI_Comm comm_;
  ServerPlan plan_;
  int me_ = -1;
  std::atomic<bool> stop_{false};
  mutable std::mutex windows_mutex_;
  std::map<std::uint64_t, std::shared_ptr<NodeMemory>> windows_;
  // The thread's own:
  std::vector<Slot> slots_;
  Pool direct_;
  Pool forwarded_;
  std::map<int, Target> targets_;
  std::vector<Forward> forwards_;
  struct PendingSend {
    MPI_Request request;
    std::vector<unsigned char> payload;
  };
  std::vector<PendingSend> sends_;
  std::int64_t in_use_ = 0;
  std::set<int> peers_;
  mutable std::mutex counters_mutex_;
  ServerPoolCounters counters_;
  std::thread thread_;
};

}  // namespace shim::rma
