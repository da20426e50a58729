#include "rma/node_server.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "common/log.hpp"
#include "common/message_tags.hpp"
#include "rma/protocol.hpp"
#include "rma/server_counters.hpp"

namespace shim::rma {

namespace {

// After an event the server keeps polling without sleeping for this long:
// requests come in bursts (an origin's chunks, a flush right after).
constexpr auto kBusyPhase = std::chrono::microseconds(200);

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

bool done(MPI_Request& request) {
  int finished = 0;
  require(PMPI_Test(&request, &finished, MPI_STATUS_IGNORE), "MPI_Test");
  return finished != 0;
}

MessageHeader header_of(const std::vector<unsigned char>& buffer) {
  MessageHeader header;
  std::memcpy(&header, buffer.data(), sizeof header);
  return header;
}

}  // namespace

NodeServer::NodeServer(MPI_Comm comm, const ServerPlan& plan) : comm_(comm), plan_(plan) {
  require(PMPI_Comm_rank(comm_, &me_), "MPI_Comm_rank");
  direct_.tag = tags::kServerRequest;
  direct_.credit_tag = tags::kServerCredit;
  forwarded_.tag = tags::kServerForward;
  forwarded_.credit_tag = tags::kServerForwardCredit;
  slots_.resize(static_cast<std::size_t>(plan_.direct_buffers + plan_.forward_buffers));
  for (Slot& slot : slots_) slot.buffer.resize(static_cast<std::size_t>(plan_.buffer_bytes));
  counters_.direct_buffer_bytes = plan_.direct_buffers * plan_.buffer_bytes;
  counters_.forward_buffer_bytes = plan_.forward_buffers * plan_.buffer_bytes;
  thread_ = std::thread([this] { run(); });
}

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

ServerPoolCounters NodeServer::counters() const {
  std::lock_guard lock(counters_mutex_);
  return counters_;
}

void NodeServer::post(Pool& pool, std::size_t slot) {
  Slot& s = slots_[slot];
  require(PMPI_Irecv_c(s.buffer.data(), static_cast<MPI_Count>(s.buffer.size()), MPI_BYTE, MPI_ANY_SOURCE, pool.tag,
                       comm_, &s.request),
          "MPI_Irecv");
  pool.posted.push_back(slot);
}

void NodeServer::run() {
  server_counters().start();
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    post(slot < static_cast<std::size_t>(plan_.direct_buffers) ? direct_ : forwarded_, slot);
  }
  auto last_event = std::chrono::steady_clock::now();
  int sleep_us = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    const auto start = std::chrono::steady_clock::now();
    if (progress()) {
      last_event = std::chrono::steady_clock::now();
      sleep_us = 0;
      std::lock_guard lock(counters_mutex_);
      counters_.busy_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(last_event - start).count();
      continue;
    }
    if (std::chrono::steady_clock::now() - last_event < kBusyPhase) continue;
    sleep_us = std::min(plan_.poll_max_us, sleep_us == 0 ? 1 : sleep_us * 2);
    sleep_for_us(sleep_us);
  }
  finish();
}

// One pass over everything in flight; whether anything happened.
bool NodeServer::progress() {
  bool any = false;
  // Forwarded messages first: they free the buffers other servers wait for.
  while (take_arrival(forwarded_, false)) any = true;
  while (take_arrival(direct_, true)) any = true;
  for (auto& [target_server, target] : targets_) {
    bool credited = false;
    while (!target.credits.empty() && done(target.credits.front().second)) {
      target.line.credited(target.credits.front().first);
      target.credits.pop_front();
      credited = true;
    }
    if (credited) forward_waiting(target_server);
    any = any || credited;
  }
  std::erase_if(forwards_, [&](Forward& forward) {
    if (!done(forward.request)) return false;
    release(direct_, forward.slot);
    any = true;
    return true;
  });
  std::erase_if(sends_, [](PendingSend& pending) { return done(pending.request); });
  return any;
}

// The oldest posted receive of the pool, if its message is in: applied or
// queued for forwarding. Only the oldest, so that each sender's messages
// are taken in the order it sent them.
bool NodeServer::take_arrival(Pool& pool, bool direct) {
  if (pool.posted.empty()) return false;
  const std::size_t slot = pool.posted.front();
  Slot& s = slots_[slot];
  int arrived = 0;
  MPI_Status status;
  require(PMPI_Test(&s.request, &arrived, &status), "MPI_Test");
  if (!arrived) return false;
  pool.posted.pop_front();
  MPI_Count bytes = 0;
  require(PMPI_Get_count_c(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  s.bytes = bytes;
  s.sender = status.MPI_SOURCE;
  const MessageHeader header = header_of(s.buffer);
  s.sequence = pool.senders[s.sender].arrived((header.flags & (direct ? kWantCredit : kWantForwardCredit)) != 0);
  peers_.insert(s.sender);
  {
    std::lock_guard lock(counters_mutex_);
    counters_.peak_buffers_in_use = std::max(counters_.peak_buffers_in_use, ++in_use_);
    counters_.distinct_peers = static_cast<std::int64_t>(peers_.size());
    if (!direct) {
      ++counters_.messages_from_servers;
    } else if (header.target_server == me_) {
      ++counters_.messages_direct;
    } else {
      ++counters_.messages_forwarded;
    }
  }
  if (direct && header.target_server != me_) {
    auto [found, fresh] = targets_.try_emplace(header.target_server, Target{CreditLine(plan_.credits), {}, {}});
    found->second.waiting.push_back(slot);
    forward_waiting(header.target_server);
    return true;
  }
  if (bytes >= static_cast<MPI_Count>(sizeof(MessageHeader))) {
    apply(s.buffer.data(), bytes);
  } else {
    print_line("server: a message without a header (ignored)");
  }
  release(pool, slot);
  return true;
}

// The slot's message is done with: its buffer is posted again, and the
// credits that are now due go back to the sender.
void NodeServer::release(Pool& pool, std::size_t slot) {
  Slot& s = slots_[slot];
  const int sender = s.sender;
  const int due = pool.senders[sender].released(s.sequence);
  post(pool, slot);
  for (int credit = 0; credit < due; ++credit) send(sender, pool.credit_tag, {});
  std::lock_guard lock(counters_mutex_);
  --in_use_;
}

// Messages waiting for `target_server`, oldest first, as far as its
// credits allow: unchanged but for the credit flag, which is now this
// server's to ask.
void NodeServer::forward_waiting(int target_server) {
  Target& target = targets_.at(target_server);
  while (!target.waiting.empty() && !target.line.full()) {
    const std::size_t slot = target.waiting.front();
    target.waiting.pop_front();
    Slot& s = slots_[slot];
    MessageHeader header = header_of(s.buffer);
    header.flags = target.line.next_wants_credit() ? std::uint32_t{kWantForwardCredit} : 0;
    std::memcpy(s.buffer.data(), &header, sizeof header);
    const std::int64_t sequence = target.line.sent();
    if (header.flags & kWantForwardCredit) {
      MPI_Request credit = MPI_REQUEST_NULL;
      require(PMPI_Irecv(nullptr, 0, MPI_BYTE, target_server, tags::kServerForwardCredit, comm_, &credit), "MPI_Irecv");
      target.credits.emplace_back(sequence, credit);
    }
    Forward forward{slot, MPI_REQUEST_NULL};
    require(
        PMPI_Isend_c(s.buffer.data(), s.bytes, MPI_BYTE, target_server, tags::kServerForward, comm_, &forward.request),
        "MPI_Isend");
    forwards_.push_back(forward);
  }
}

// Every process has passed the stop barrier, after completing all it
// shipped: nothing more is coming, and what is in flight completes.
void NodeServer::finish() {
  for (Forward& forward : forwards_) require(PMPI_Wait(&forward.request, MPI_STATUS_IGNORE), "MPI_Wait");
  forwards_.clear();
  for (auto& [target_server, target] : targets_) {
    for (auto& [sequence, credit] : target.credits) require(PMPI_Wait(&credit, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  targets_.clear();
  for (Pool* pool : {&direct_, &forwarded_}) {
    for (const std::size_t slot : pool->posted) {
      require(PMPI_Cancel(&slots_[slot].request), "MPI_Cancel");
      require(PMPI_Wait(&slots_[slot].request, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    pool->posted.clear();
  }
  for (PendingSend& pending : sends_) require(PMPI_Wait(&pending.request, MPI_STATUS_IGNORE), "MPI_Wait");
  sends_.clear();
}

void NodeServer::send(int destination, int tag, std::vector<unsigned char> payload) {
  PendingSend pending{MPI_REQUEST_NULL, std::move(payload)};
  require(PMPI_Isend_c(pending.payload.data(), static_cast<MPI_Count>(pending.payload.size()), MPI_BYTE, destination,
                       tag, comm_, &pending.request),
          "MPI_Isend");
  sends_.push_back(std::move(pending));
}

void NodeServer::apply(const unsigned char* message, std::int64_t bytes) {
  MessageHeader header;
  std::memcpy(&header, message, sizeof header);
  std::int64_t at = sizeof header;
  while (at + static_cast<std::int64_t>(sizeof(RequestHeader)) <= bytes) {
    const std::int64_t used = apply_one(header.origin, message + at, bytes - at);
    if (used <= 0) break;
    at += used;
  }
}

std::int64_t NodeServer::apply_one(int origin, const unsigned char* request, std::int64_t available) {
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
      if (status == MPI_SUCCESS) server_counters().applied(header.data_bytes);
    }
  }
  if (header.flags & kWantResult) {
    send(origin, tags::kServerReply, std::move(result));
  } else if (header.flags & kWantAck) {
    std::vector<unsigned char> ack(sizeof status);
    std::memcpy(ack.data(), &status, sizeof status);
    send(origin, tags::kServerReply, std::move(ack));
  }
  return size;
}

}  // namespace shim::rma
