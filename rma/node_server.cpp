#include "rma/node_server.hpp"
#include "common/message_tags.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>
#include <string>

#include "rma/protocol.hpp"
#include "rma/server_counters.hpp"
#include "common/log.hpp"

namespace shim::rma {

namespace {

// After a request the server keeps polling without sleeping for this long:
// requests come in bursts (an origin's chunks, a flush right after).
constexpr auto kBusyPhase = std::chrono::microseconds(200);
constexpr std::size_t kReceiveSlots = 4;

// The server thread has no caller to return an error to, and origins wait
// for what it applies: if MPI fails it, operations would be lost, so the
// job stops with the reason instead.
void require(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (PMPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  print_line(std::string("server: ") + call + " failed (" + std::string(text, static_cast<std::size_t>(length)) +
             "); accumulates shipped to this node cannot be applied, so the job stops");
  PMPI_Abort(MPI_COMM_WORLD, rc);
}

void sleep_for_us(int us) {
  timespec pause{0, static_cast<long>(us) * 1000};
  nanosleep(&pause, nullptr);
}

}  // namespace

NodeServer::NodeServer(MPI_Comm comm, int poll_max_us)
    : comm_(comm), poll_max_us_(poll_max_us), thread_([this] { run(); }) {}

NodeServer::~NodeServer() {
  stop_.store(true);
  thread_.join();
}

void NodeServer::add_window(std::uint64_t id, std::shared_ptr<NodeMemory> memory) {
  std::lock_guard lock(windows_mutex_);
  windows_[id] = std::move(memory);
}

void NodeServer::remove_window(std::uint64_t id) {
  std::lock_guard lock(windows_mutex_);
  windows_.erase(id);
}

std::shared_ptr<NodeMemory> NodeServer::window(std::uint64_t id) {
  std::lock_guard lock(windows_mutex_);
  const auto found = windows_.find(id);
  return found == windows_.end() ? nullptr : found->second;
}

// Requests are received into a few pre-posted buffers, so the transfer of
// the next chunk overlaps applying this one. The oldest posted receive is
// always handled first: receives match messages in the order they were
// posted, so each origin's requests are applied in the order it sent them.
void NodeServer::run() {
  struct Slot {
    std::vector<unsigned char> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  server_counters().start();
  std::vector<Slot> slots(kReceiveSlots);
  auto post = [this](Slot& slot) {
    require(PMPI_Irecv_c(slot.buffer.data(), kMaxRequestBytes, MPI_BYTE, MPI_ANY_SOURCE, tags::kServerRequest, comm_,
                         &slot.request),
            "MPI_Irecv");
  };
  for (Slot& slot : slots) {
    slot.buffer.resize(static_cast<std::size_t>(kMaxRequestBytes));
    post(slot);
  }
  std::size_t oldest = 0;
  auto last_request = std::chrono::steady_clock::now();
  int sleep_us = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    Slot& slot = slots[oldest];
    int arrived = 0;
    MPI_Status status;
    require(PMPI_Test(&slot.request, &arrived, &status), "MPI_Test");
    if (arrived) {
      const ServerCounters::BusyTime busy;
      MPI_Count bytes = 0;
      require(PMPI_Get_count_c(&status, MPI_BYTE, &bytes), "MPI_Get_count");
      handle(status.MPI_SOURCE, slot.buffer.data(), bytes);
      post(slot);
      oldest = (oldest + 1) % slots.size();
      last_request = std::chrono::steady_clock::now();
      sleep_us = 0;
      continue;
    }
    // Replies still in flight (large ones go by rendezvous).
    std::erase_if(replies_, [](PendingReply& pending) {
      int done = 0;
      require(PMPI_Test(&pending.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      return done != 0;
    });
    if (std::chrono::steady_clock::now() - last_request < kBusyPhase) continue;
    sleep_us = std::min(poll_max_us_, sleep_us == 0 ? 1 : sleep_us * 2);
    sleep_for_us(sleep_us);
  }
  // Every process has passed the stop barrier: nothing more is coming.
  for (Slot& slot : slots) {
    require(PMPI_Cancel(&slot.request), "MPI_Cancel");
    require(PMPI_Wait(&slot.request, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  for (PendingReply& pending : replies_) require(PMPI_Wait(&pending.request, MPI_STATUS_IGNORE), "MPI_Wait");
  replies_.clear();
}

void NodeServer::reply(int source, std::vector<unsigned char> payload) {
  PendingReply pending{MPI_REQUEST_NULL, std::move(payload)};
  require(PMPI_Isend_c(pending.payload.data(), static_cast<MPI_Count>(pending.payload.size()), MPI_BYTE, source,
                       tags::kServerReply, comm_, &pending.request),
          "MPI_Isend");
  replies_.push_back(std::move(pending));
}

void NodeServer::handle(int source, const unsigned char* message, std::int64_t bytes) {
  std::int64_t at = 0;
  while (at + static_cast<std::int64_t>(sizeof(RequestHeader)) <= bytes) {
    const std::int64_t used = handle_one(source, message + at, bytes - at);
    if (used <= 0) break;
    at += used;
  }
}

std::int64_t NodeServer::handle_one(int source, const unsigned char* request, std::int64_t available) {
  RequestHeader header;
  std::memcpy(&header, request, sizeof header);
  const std::int64_t size = static_cast<std::int64_t>(
      padded_request_bytes(static_cast<std::size_t>(std::max(header.run_count, 0)), header.payload_bytes));
  std::int32_t status = MPI_SUCCESS;
  std::vector<unsigned char> result;
  if (header.flags & kWantResult) result.resize(static_cast<std::size_t>(header.data_bytes));
  if (header.run_count < 0 || header.payload_bytes < 0 || size > available) {
    print_line("server: a malformed request (ignored)");
    status = MPI_ERR_INTERN;
  } else if (header.kind != RequestKind::flush) {
    const std::shared_ptr<NodeMemory> memory = window(header.window_id);
    std::vector<ByteRun> runs(static_cast<std::size_t>(header.run_count));
    std::memcpy(runs.data(), request + sizeof header, runs.size() * sizeof(ByteRun));
    const unsigned char* payload = request + sizeof header + runs.size() * sizeof(ByteRun);
    const bool cas = header.kind == RequestKind::compare_and_swap;
    if (memory == nullptr || header.target_local < 0 || header.target_local >= memory->segments()) {
      print_line("server: a request names a window or segment this node does not have (ignored)");
      status = MPI_ERR_WIN;
    } else {
      status = memory->apply(header.target_local, header.target_offset, runs, payload, header.data_bytes, header.op,
                             header.basic, result.empty() ? nullptr : result.data(),
                             cas ? payload + header.data_bytes : nullptr);
      server_counters().applied(header.data_bytes);
    }
  }
  if (header.flags & kWantResult) {
    reply(source, std::move(result));
  } else if (header.flags & kWantAck) {
    std::vector<unsigned char> ack(sizeof status);
    std::memcpy(ack.data(), &status, sizeof status);
    reply(source, std::move(ack));
  }
  return size;
}

}  // namespace shim::rma
