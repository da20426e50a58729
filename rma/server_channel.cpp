#include "rma/server_channel.hpp"
#include "common/message_tags.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "common/mpi_try.hpp"
#include "rma/protocol.hpp"

namespace shim::rma {

namespace {

// Replies from one server to this process match receives in the order the
// receives were posted, and the server replies in the order the requests
// arrived: posting and sending must happen together, for every window and
// thread of the process.
std::mutex g_ship_mutex;

// Requests a server may receive from one origin before the origin asks for
// an acknowledgement, and acknowledgements outstanding before it waits:
// together they bound what queues up at a server.
constexpr int kRequestsPerAck = 16;
constexpr std::size_t kMaxInFlight = 64;
// Requests without a reply and up to this size (header, runs, payload) are
// gathered per server into one message of at most this size: a Fock build
// makes thousands of accumulates of a few KiB.
constexpr std::int64_t kBatchBytes = 64 * 1024;

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

}  // namespace

ServerChannel::ServerChannel(std::uint64_t window_id, MPI_Comm server_comm, int world_size)
    : window_id_(window_id), server_comm_(server_comm), unacknowledged_(static_cast<std::size_t>(world_size), 0) {}

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
  if (!s.result && s.compare == nullptr && size <= static_cast<std::size_t>(kBatchBytes)) {
    const auto pending = batches_.find(s.server);
    if (pending != batches_.end() && pending->second.bytes.size() + size > static_cast<std::size_t>(kBatchBytes)) {
      SHIM_TRY(send_batch(s.server, false));
    }
    Batch& batch = batches_[s.server];
    batch.last = batch.bytes.size();
    batch.bytes.resize(batch.last + size);
    write_request(header, s, batch.bytes.data() + batch.last);
    return MPI_SUCCESS;
  }
  // What was batched for this server goes first: program order.
  SHIM_TRY(send_batch(s.server, false));
  if (!s.result && unacknowledged_[static_cast<std::size_t>(s.server)] + 1 >= kRequestsPerAck) {
    header.flags = kWantAck;
  }
  std::vector<unsigned char> message(size);
  write_request(header, s, message.data());
  return post(s.server, std::move(message), header.flags, s.result, s.result_slot, s.bytes);
}

int ServerChannel::send_batch(int server, bool acknowledge) {
  const auto found = batches_.find(server);
  if (found == batches_.end() || found->second.bytes.empty()) return MPI_SUCCESS;
  Batch batch = std::move(found->second);
  batches_.erase(found);
  std::uint32_t flags = 0;
  if (acknowledge || unacknowledged_[static_cast<std::size_t>(server)] + 1 >= kRequestsPerAck) {
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

int ServerChannel::post(int server, std::vector<unsigned char> message, std::uint32_t flags,
                        const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot,
                        std::int64_t result_bytes) {
  InFlight send;
  send.buffer = std::move(message);
  InFlight reply;
  {
    const std::lock_guard ship_lock(g_ship_mutex);
    if (flags & kWantResult) {
      SHIM_TRY(PMPI_Irecv_c(result_slot, result_bytes, MPI_BYTE, server, tags::kServerReply, server_comm_,
                            &reply.request));
      reply.result = result;
      ++result->replies_left;
    } else if (flags & kWantAck) {
      reply.ack = true;
      reply.buffer.resize(sizeof(std::int32_t));
      SHIM_TRY(PMPI_Irecv_c(reply.buffer.data(), static_cast<MPI_Count>(reply.buffer.size()), MPI_BYTE, server,
                            tags::kServerReply, server_comm_, &reply.request));
    }
    if (const int rc = PMPI_Isend_c(send.buffer.data(), static_cast<MPI_Count>(send.buffer.size()), MPI_BYTE,
                                    server, tags::kServerRequest, server_comm_, &send.request);
        rc != MPI_SUCCESS) {
      // The reply will never come: its receive must not stay posted, where it
      // would take the reply meant for a later request.
      if (reply.request != MPI_REQUEST_NULL) {
        withdraw(reply.request);
        if (reply.result) --reply.result->replies_left;
      }
      return rc;
    }
  }
  int& unacknowledged = unacknowledged_[static_cast<std::size_t>(server)];
  unacknowledged = flags != 0 ? 0 : unacknowledged + 1;
  in_flight_.push_back(std::move(send));
  if (reply.request != MPI_REQUEST_NULL) in_flight_.push_back(std::move(reply));
  return in_flight_.size() > kMaxInFlight ? wait_in_flight(kMaxInFlight / 2) : MPI_SUCCESS;
}

// Waits for the oldest operations in flight until at most `keep` remain.
int ServerChannel::wait_in_flight(std::size_t keep) {
  int rc = MPI_SUCCESS;
  auto keep_first = [&rc](int step) {
    if (rc == MPI_SUCCESS) rc = step;
  };
  while (in_flight_.size() > keep) {
    InFlight& oldest = in_flight_.front();
    keep_first(PMPI_Wait(&oldest.request, MPI_STATUS_IGNORE));
    if (oldest.ack && rc == MPI_SUCCESS) {
      std::int32_t status = MPI_SUCCESS;
      std::memcpy(&status, oldest.buffer.data(), sizeof status);
      keep_first(status);
    }
    if (oldest.result && --oldest.result->replies_left == 0) keep_first(oldest.result->finish());
    in_flight_.pop_front();
  }
  return rc;
}

// Every server this process shipped to without an acknowledgement since:
// its pending batch goes with one, or a flush request asks for one; the
// acknowledgement means everything before it is applied.
int ServerChannel::flush_servers() {
  while (!batches_.empty()) SHIM_TRY(send_batch(batches_.begin()->first, true));
  for (std::size_t server = 0; server < unacknowledged_.size(); ++server) {
    if (unacknowledged_[server] == 0) continue;
    RequestHeader header{};
    header.kind = RequestKind::flush;
    header.flags = kWantAck;
    header.window_id = window_id_;
    std::vector<unsigned char> message(sizeof header);
    std::memcpy(message.data(), &header, sizeof header);
    SHIM_TRY(post(static_cast<int>(server), std::move(message), kWantAck, nullptr, nullptr, 0));
  }
  return MPI_SUCCESS;
}

int ServerChannel::complete() {
  if (in_flight_.empty() && batches_.empty() &&
      std::all_of(unacknowledged_.begin(), unacknowledged_.end(), [](int n) { return n == 0; })) {
    return MPI_SUCCESS;
  }
  SHIM_TRY(flush_servers());
  return wait_in_flight(0);
}

int ServerChannel::wait_for(const ResultAssembly& result) {
  // The result's replies are in flight, oldest first among its own.
  while (!result.done && !in_flight_.empty()) SHIM_TRY(wait_in_flight(in_flight_.size() - 1));
  return result.done ? MPI_SUCCESS : MPI_ERR_INTERN;
}

}  // namespace shim::rma
