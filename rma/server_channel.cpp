#include "rma/server_channel.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "common/message_tags.hpp"
#include "common/mpi_try.hpp"
#include "rma/credit_line.hpp"
#include "rma/protocol.hpp"
#include "rma/rma_runtime.hpp"

namespace shim::rma {

namespace {

// Replies from one server to this process match receives in the order the
// receives were posted, and the server replies in the order the requests
// arrived; credits likewise. Posting and sending must happen together, for
// every window and thread of the process.
std::mutex g_ship_mutex;

// Per first hop (world rank): the credits are the process's, not a window's,
// since the server's buffers are per origin process.
struct FirstHop {
  CreditLine line;
  std::deque<std::pair<std::int64_t, MPI_Request>> credits;  // asked for, oldest first
};
std::map<int, FirstHop> g_first_hops;

// A receive for a reply that will never come: cancelled and completed. If
// the cancel itself fails there is nothing more to try; the send's error is
// what the caller reports.
void withdraw(MPI_Request& request) {
  if (PMPI_Cancel(&request) == MPI_SUCCESS) static_cast<void>(PMPI_Wait(&request, MPI_STATUS_IGNORE));
}

void write_request(const RequestHeader& header, const Shipment& s, unsigned char* out) {
  const std::size_t runs_bytes = s.runs.size() * sizeof(ByteRun);
  std::memcpy(out, &header, sizeof header);
  std::memcpy(out + sizeof header, s.runs.data(), runs_bytes);
  unsigned char* payload = out + sizeof header + runs_bytes;
  if (s.data != nullptr) std::memcpy(payload, s.data, static_cast<std::size_t>(s.bytes));
  if (s.compare != nullptr) std::memcpy(payload + s.bytes, s.compare, static_cast<std::size_t>(s.bytes));
}

// Under g_ship_mutex: the oldest credit asked of `hop` is in.
int wait_oldest_credit(FirstHop& hop) {
  auto& [sequence, request] = hop.credits.front();
  SHIM_TRY(PMPI_Wait(&request, MPI_STATUS_IGNORE));
  hop.line.credited(sequence);
  hop.credits.pop_front();
  return MPI_SUCCESS;
}

}  // namespace

int drain_server_credits() {
  const std::lock_guard ship_lock(g_ship_mutex);
  for (auto& [server, hop] : g_first_hops) {
    while (!hop.credits.empty()) SHIM_TRY(wait_oldest_credit(hop));
  }
  g_first_hops.clear();
  return MPI_SUCCESS;
}

ServerChannel::ServerChannel(std::uint64_t window_id, MPI_Comm server_comm, std::int64_t buffer_bytes)
    : window_id_(window_id), server_comm_(server_comm), buffer_bytes_(buffer_bytes) {}

int ServerChannel::ship(const Shipment& s) {
  RequestHeader header{};
  header.kind = s.compare != nullptr ? RequestKind::compare_and_swap : RequestKind::accumulate;
  header.window_id = window_id_;
  header.target_local = s.target_local;
  header.run_count = static_cast<std::int32_t>(s.runs.size());
  header.basic = s.basic;
  header.op = s.op;
  header.target_offset = s.target_offset;
  header.data_bytes = s.bytes;
  header.payload_bytes = s.data == nullptr ? 0 : (s.compare != nullptr ? 2 * s.bytes : s.bytes);
  if (s.result) header.flags = kWantResult;
  const std::size_t size = padded_request_bytes(s.runs.size(), header.payload_bytes);
  unflushed_.insert(s.server);
  if (!s.result && s.compare == nullptr) {
    // Requests without a reply are gathered per server: a Fock build makes
    // thousands of accumulates of a few KiB.
    const auto pending = batches_.find(s.server);
    if (pending != batches_.end() && pending->second.bytes.size() + size > static_cast<std::size_t>(buffer_bytes_)) {
      SHIM_TRY(send_batch(s.server, false));
    }
    Batch& batch = batches_[s.server];
    if (batch.bytes.empty()) batch.bytes.resize(sizeof(MessageHeader));
    batch.last = batch.bytes.size();
    batch.bytes.resize(batch.last + size);
    write_request(header, s, batch.bytes.data() + batch.last);
    return MPI_SUCCESS;
  }
  // What was batched for this server goes first: program order.
  SHIM_TRY(send_batch(s.server, false));
  std::vector<unsigned char> message(sizeof(MessageHeader) + size);
  write_request(header, s, message.data() + sizeof(MessageHeader));
  return post(s.server, std::move(message), header.flags, s.result, s.result_slot, s.bytes);
}

int ServerChannel::send_batch(int server, bool acknowledge) {
  const auto found = batches_.find(server);
  if (found == batches_.end() || found->second.bytes.empty()) return MPI_SUCCESS;
  Batch batch = std::move(found->second);
  batches_.erase(found);
  std::uint32_t flags = 0;
  if (acknowledge) {
    // The last request of the batch asks for the acknowledgement: the
    // server applies a batch in order, so it covers all of them.
    flags = kWantAck;
    RequestHeader last;
    std::memcpy(&last, batch.bytes.data() + batch.last, sizeof last);
    last.flags |= kWantAck;
    std::memcpy(batch.bytes.data() + batch.last, &last, sizeof last);
  }
  return post(server, std::move(batch.bytes), flags, nullptr, nullptr, 0);
}

// `message` starts with room for the MessageHeader, written here.
int ServerChannel::post(int server, std::vector<unsigned char> message, std::uint32_t flags,
                        const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot,
                        std::int64_t result_bytes) {
  InFlight send;
  send.buffer = std::move(message);
  InFlight reply;
  {
    const std::lock_guard ship_lock(g_ship_mutex);
    const int first_hop_server = first_hop(server);
    FirstHop& hop =
        g_first_hops.try_emplace(first_hop_server, FirstHop{CreditLine(server_credits()), {}}).first->second;
    while (hop.line.full()) SHIM_TRY(wait_oldest_credit(hop));
    MessageHeader header{};
    header.flags = hop.line.next_wants_credit() ? std::uint32_t{kWantCredit} : 0;
    header.origin = my_world_rank();
    header.target_server = server;
    std::memcpy(send.buffer.data(), &header, sizeof header);
    MPI_Request credit = MPI_REQUEST_NULL;
    if (header.flags & kWantCredit) {
      SHIM_TRY(PMPI_Irecv(nullptr, 0, MPI_BYTE, first_hop_server, tags::kServerCredit, server_comm_, &credit));
    }
    // Nothing will answer a message that was not sent: its receives must
    // not stay posted, where they would take the answers (and credits)
    // meant for later messages.
    auto abandon = [&](int rc) {
      if (credit != MPI_REQUEST_NULL) withdraw(credit);
      if (reply.request != MPI_REQUEST_NULL) {
        withdraw(reply.request);
        if (reply.result) --reply.result->replies_left;
      }
      return rc;
    };
    int rc = MPI_SUCCESS;
    if (flags & kWantResult) {
      rc = PMPI_Irecv_c(result_slot, result_bytes, MPI_BYTE, server, tags::kServerReply, server_comm_, &reply.request);
      if (rc == MPI_SUCCESS) {
        reply.result = result;
        ++result->replies_left;
      }
    } else if (flags & kWantAck) {
      reply.ack = true;
      reply.buffer.resize(sizeof(std::int32_t));
      rc = PMPI_Irecv_c(reply.buffer.data(), static_cast<MPI_Count>(reply.buffer.size()), MPI_BYTE, server,
                        tags::kServerReply, server_comm_, &reply.request);
    }
    if (rc == MPI_SUCCESS) {
      rc = PMPI_Isend_c(send.buffer.data(), static_cast<MPI_Count>(send.buffer.size()), MPI_BYTE, first_hop_server,
                        tags::kServerRequest, server_comm_, &send.request);
    }
    if (rc != MPI_SUCCESS) return abandon(rc);
    const std::int64_t sequence = hop.line.sent();
    if (credit != MPI_REQUEST_NULL) hop.credits.emplace_back(sequence, credit);
  }
  in_flight_.push_back(std::move(send));
  if (reply.request != MPI_REQUEST_NULL) in_flight_.push_back(std::move(reply));
  return retire_finished();
}

int ServerChannel::settle(InFlight& oldest) {
  int rc = MPI_SUCCESS;
  if (oldest.ack) std::memcpy(&rc, oldest.buffer.data(), sizeof rc);
  if (oldest.result && --oldest.result->replies_left == 0) {
    const int finished = oldest.result->finish();
    if (rc == MPI_SUCCESS) rc = finished;
  }
  return rc;
}

// Operations at the front that are done already leave, so that what a long
// epoch keeps is what is really in flight.
int ServerChannel::retire_finished() {
  while (!in_flight_.empty()) {
    int finished = 0;
    SHIM_TRY(PMPI_Test(&in_flight_.front().request, &finished, MPI_STATUS_IGNORE));
    if (!finished) break;
    const int rc = settle(in_flight_.front());
    in_flight_.pop_front();
    SHIM_TRY(rc);
  }
  return MPI_SUCCESS;
}

// Waits for the oldest operations in flight until at most `keep` remain.
int ServerChannel::wait_in_flight(std::size_t keep) {
  int rc = MPI_SUCCESS;
  auto keep_first = [&rc](int step) {
    if (rc == MPI_SUCCESS) rc = step;
  };
  while (in_flight_.size() > keep) {
    InFlight& oldest = in_flight_.front();
    const int waited = PMPI_Wait(&oldest.request, MPI_STATUS_IGNORE);
    keep_first(waited);
    if (waited == MPI_SUCCESS) keep_first(settle(oldest));
    in_flight_.pop_front();
  }
  return rc;
}

// Every server shipped to since the last completion: its pending batch goes
// with an acknowledgement, or a flush request asks for one. It travels the
// requests' path, so the acknowledgement means everything before it is
// applied.
int ServerChannel::flush_servers() {
  for (const int server : unflushed_) {
    if (batches_.contains(server)) {
      SHIM_TRY(send_batch(server, true));
      continue;
    }
    RequestHeader header{};
    header.kind = RequestKind::flush;
    header.flags = kWantAck;
    header.window_id = window_id_;
    std::vector<unsigned char> message(sizeof(MessageHeader) + sizeof header);
    std::memcpy(message.data() + sizeof(MessageHeader), &header, sizeof header);
    SHIM_TRY(post(server, std::move(message), kWantAck, nullptr, nullptr, 0));
  }
  unflushed_.clear();
  return MPI_SUCCESS;
}

int ServerChannel::complete() {
  if (in_flight_.empty() && unflushed_.empty()) return MPI_SUCCESS;
  SHIM_TRY(flush_servers());
  return wait_in_flight(0);
}

int ServerChannel::wait_for(const ResultAssembly& result) {
  // The result's replies are in flight, oldest first among its own.
  while (!result.done && !in_flight_.empty()) SHIM_TRY(wait_in_flight(in_flight_.size() - 1));
  return result.done ? MPI_SUCCESS : MPI_ERR_INTERN;
}

}  // namespace shim::rma
