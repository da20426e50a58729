#include "rma/managed_window.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "rma/combine.hpp"
#include "rma/node_server.hpp"
#include "rma/protocol.hpp"
#include "rma/rma_runtime.hpp"
#include "shim/comm_state.hpp"
#include "common/log.hpp"
#include "shim/runtime.hpp"

namespace shim::rma {

namespace {

// Replies from one server to this process match receives in the order the
// receives were posted, and the server replies in the order the requests
// arrived: posting and sending must happen together, for every window and
// thread of the process.
std::mutex g_ship_mutex;

std::uint32_t g_window_counter = 0;

// Requests a server may receive from one origin before the origin asks for
// an acknowledgement, and acknowledgements outstanding before it waits:
// together they bound what queues up at a server.
constexpr int kRequestsPerAck = 16;
constexpr std::size_t kMaxInFlight = 64;
// Requests without a reply and up to this size (header, runs, payload) are
// gathered per server into one message of at most this size: a Fock build
// makes thousands of accumulates of a few KiB.
constexpr std::int64_t kBatchBytes = 64 * 1024;

#define SHIM_RMA_TRY(call)              \
  do {                                  \
    const int rc_ = (call);             \
    if (rc_ != MPI_SUCCESS) return rc_; \
  } while (false)

int query_empty(void*, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int free_nothing(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

// A request that is already complete: the operation it stands for finished
// inside the call.
int completed_request(MPI_Request* request) {
  SHIM_RMA_TRY(PMPI_Grequest_start(query_empty, free_nothing, cancel_nothing, nullptr, request));
  return PMPI_Grequest_complete(*request);
}

AccumulateChoice requested_choice(MPI_Info info, bool& from_info, int comm_rank) {
  from_info = false;
  AccumulateChoice choice = config().accumulate;
  if (info == MPI_INFO_NULL) return choice;
  char value[32] = {};
  int length = static_cast<int>(sizeof value) - 1;
  int found = 0;
  PMPI_Info_get_string(info, "shim_accumulate", &length, value, &found);
  if (!found) return choice;
  if (parse_accumulate_choice(value, choice)) {
    from_info = true;
  } else if (comm_rank == 0) {
    print_line(std::string("window info shim_accumulate='") + value +
               "' is not valid (accepted: auto|owner|caller|native); using SHIM_ACCUMULATE's " +
               std::string(name(config().accumulate)));
  }
  return choice;
}

// Bytes of [offset + lb, offset + ub) a target access touches, for count
// datatypes of the layout.
void touched_span(const DatatypeLayout& layout, MPI_Count count, std::int64_t& low, std::int64_t& high) {
  const std::int64_t first = layout.true_lb;
  const std::int64_t last = (count - 1) * layout.extent + layout.true_lb;
  low = std::min(first, last);
  high = std::max(first, last) + layout.true_extent;
}

// The largest payload of a chunk starting at `first` whose target runs fit
// a request; at least one element.
std::int64_t chunk_bytes(const DatatypeLayout& layout, std::int64_t first, std::int64_t left,
                         std::vector<ByteRun>& runs) {
  const std::int64_t element = layout.basic_size;
  std::int64_t take = std::min(left, std::max(element, kChunkBytes / element * element));
  for (;;) {
    runs.clear();
    runs_of_stream(layout, first, take, runs);
    if (static_cast<std::int64_t>(runs.size()) <= kMaxRuns || take == element) return take;
    take = std::max(element, take / 2 / element * element);
  }
}

}  // namespace

int ResultAssembly::finish() {
  done = true;
  MPI_Count position = 0;
  return PMPI_Unpack_c(packed.data(), static_cast<MPI_Count>(packed.size()), &position, result, result_count,
                       result_type, MPI_COMM_SELF);
}

ResultAssembly::~ResultAssembly() {
  if (owns_type) PMPI_Type_free(&result_type);
}

ManagedWindow::~ManagedWindow() = default;

int ManagedWindow::create(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  std::unique_ptr<ManagedWindow> w(new ManagedWindow);
  CommState* state = nullptr;
  const topo::Hierarchy* hierarchy = nullptr;
  SHIM_RMA_TRY(comm_state(comm, state));
  SHIM_RMA_TRY(state->hierarchy(comm, config().node_size, hierarchy));
  const topo::Layout& layout = hierarchy->layout();
  SHIM_RMA_TRY(PMPI_Comm_dup(comm, &w->comm_));
  SHIM_RMA_TRY(PMPI_Comm_dup(hierarchy->node(), &w->node_comm_));
  w->rank_ = hierarchy->rank();
  int node_rank = 0;
  int node_size = 1;
  PMPI_Comm_rank(w->node_comm_, &node_rank);
  PMPI_Comm_size(w->node_comm_, &node_size);

  // Each process's segment on pages of its own: no false sharing between
  // processes, and page-aligned like the memory MPI_Win_allocate returns.
  MPI_Info shared_info = MPI_INFO_NULL;
  PMPI_Info_create(&shared_info);
  PMPI_Info_set(shared_info, "alloc_shared_noncontig", "true");
  unsigned char* base = nullptr;
  int rc = PMPI_Win_allocate_shared(size, disp_unit, shared_info, w->node_comm_, &base, &w->shared_);
  PMPI_Info_free(&shared_info);
  SHIM_RMA_TRY(rc);
  std::uint32_t* lock_words = nullptr;
  const MPI_Aint lock_bytes = node_rank == 0 ? static_cast<MPI_Aint>(shim::StripeLocks::kBytes) : 0;
  SHIM_RMA_TRY(PMPI_Win_allocate_shared(lock_bytes, 1, MPI_INFO_NULL, w->node_comm_, &lock_words, &w->lock_window_));
  MPI_Aint queried_size = 0;
  int queried_unit = 0;
  SHIM_RMA_TRY(PMPI_Win_shared_query(w->lock_window_, 0, &queried_size, &queried_unit, &lock_words));
  if (node_rank == 0) std::memset(lock_words, 0, shim::StripeLocks::kBytes);
  std::vector<Segment> segments(static_cast<std::size_t>(node_size));
  for (int local = 0; local < node_size; ++local) {
    void* segment_base = nullptr;
    SHIM_RMA_TRY(PMPI_Win_shared_query(w->shared_, local, &queried_size, &queried_unit, &segment_base));
    segments[static_cast<std::size_t>(local)] = {static_cast<unsigned char*>(segment_base), queried_size};
  }
  w->memory_ = std::make_shared<NodeMemory>(std::move(segments), lock_words);

  // What every process must know of every target.
  struct Announcement {
    std::int64_t bytes;
    std::uint64_t id;
    std::int32_t world_rank;
    std::int32_t local;
    std::int32_t disp_unit;
    std::int32_t server_reachable;
  };
  const int my_world = hierarchy->world_rank(w->rank_);
  const int my_server = server_of(my_world);
  int server_reachable = 0;
  if (my_server >= 0) {
    MPI_Group world_group = MPI_GROUP_NULL, node_group = MPI_GROUP_NULL;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_group(w->node_comm_, &node_group);
    int in_node = MPI_UNDEFINED;
    PMPI_Group_translate_ranks(world_group, 1, &my_server, node_group, &in_node);
    PMPI_Group_free(&world_group);
    PMPI_Group_free(&node_group);
    server_reachable = in_node != MPI_UNDEFINED;
  }
  Announcement mine{size, 0, my_world, node_rank, disp_unit, server_reachable};
  if (w->rank_ == 0) mine.id = (std::uint64_t(static_cast<std::uint32_t>(my_world)) << 32) | g_window_counter++;
  std::vector<Announcement> all(static_cast<std::size_t>(layout.size()));
  SHIM_RMA_TRY(PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, w->comm_));
  w->id_ = all[0].id;
  bool reach_all = true;
  w->targets_.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    Target& target = w->targets_[r];
    target.world_rank = all[r].world_rank;
    target.server_world_rank = server_of(all[r].world_rank);
    target.local = all[r].local;
    target.same_node = layout.same_node(w->rank_, static_cast<int>(r));
    target.disp_unit = all[r].disp_unit;
    target.bytes = all[r].bytes;
    reach_all = reach_all && all[r].server_reachable != 0;
  }
  w->epochs_.assign(all.size(), Epoch::none);
  int world_size = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  w->unflushed_.assign(static_cast<std::size_t>(world_size), 0);

  WindowFacts facts;
  facts.requested = requested_choice(info, facts.from_info_key, w->rank_);
  facts.nodes = layout.nodes();
  facts.servers_running = servers_running();
  facts.servers_reach = reach_all;
  w->decision_ = choose_accumulate_path(facts);

  SHIM_RMA_TRY(PMPI_Win_create(base, size, disp_unit, info, comm, &w->user_));
  if (w->decision_.path == AccumulatePath::caller) {
    SHIM_RMA_TRY(PMPI_Win_create(base, size, 1, MPI_INFO_NULL, w->comm_, &w->caller_));
  }
  if (w->decision_.path == AccumulatePath::owner && local_server() != nullptr && my_server == my_world) {
    local_server()->add_window(w->id_, w->memory_);
    w->hosts_server_ = true;
  }
  // No request may reach a server before it knows the window.
  SHIM_RMA_TRY(PMPI_Barrier(w->comm_));
  if (config().verbose && w->rank_ == 0) {
    print_line("accumulate on window " + std::to_string(w->id_ & 0xffffffffu) + " of " + state->label() + ", " +
               std::to_string(layout.nodes()) + " node(s): every size -> " + std::string(name(w->decision_.path)) +
               ": " + w->decision_.reason);
  }
  *win = w->user_;
  SHIM_RMA_TRY(PMPI_Win_set_attr(*win, window_keyval(), w.get()));
  w.release();
  *static_cast<void**>(baseptr) = base;
  return MPI_SUCCESS;
}

ManagedWindow* ManagedWindow::of(MPI_Win win) {
  if (win == MPI_WIN_NULL || window_keyval() == MPI_KEYVAL_INVALID) return nullptr;
  void* state = nullptr;
  int found = 0;
  if (PMPI_Win_get_attr(win, window_keyval(), &state, &found) != MPI_SUCCESS || !found) return nullptr;
  return static_cast<ManagedWindow*>(state);
}

int ManagedWindow::free(MPI_Win* win) {
  ManagedWindow* w = of(*win);
  if (w == nullptr) return PMPI_Win_free(win);
  SHIM_RMA_TRY(w->complete_all());
  // Every origin has completed what it shipped here.
  SHIM_RMA_TRY(PMPI_Barrier(w->comm_));
  if (w->hosts_server_) local_server()->remove_window(w->id_);
  MPI_Comm comm = w->comm_, node_comm = w->node_comm_;
  MPI_Win shared = w->shared_, locks = w->lock_window_, caller = w->caller_;
  // Deletes the state through the attribute's callback.
  SHIM_RMA_TRY(PMPI_Win_free(win));
  if (caller != MPI_WIN_NULL) PMPI_Win_free(&caller);
  PMPI_Win_free(&locks);
  PMPI_Win_free(&shared);
  PMPI_Comm_free(&node_comm);
  PMPI_Comm_free(&comm);
  return MPI_SUCCESS;
}

void ManagedWindow::note_lock(int target, bool nocheck) {
  std::lock_guard lock(mutex_);
  if (target >= 0 && static_cast<std::size_t>(target) < epochs_.size()) {
    epochs_[static_cast<std::size_t>(target)] = nocheck ? Epoch::confirmed : Epoch::unconfirmed;
  }
}

void ManagedWindow::note_lock_all(bool nocheck) {
  std::lock_guard lock(mutex_);
  std::fill(epochs_.begin(), epochs_.end(), nocheck ? Epoch::confirmed : Epoch::unconfirmed);
}

void ManagedWindow::note_unlock(int target) {
  std::lock_guard lock(mutex_);
  if (target >= 0 && static_cast<std::size_t>(target) < epochs_.size()) {
    epochs_[static_cast<std::size_t>(target)] = Epoch::none;
  }
}

void ManagedWindow::note_unlock_all() {
  std::lock_guard lock(mutex_);
  std::fill(epochs_.begin(), epochs_.end(), Epoch::none);
}

// MPICH grants passive-target locks lazily, at the first operation or at
// unlock. An operation shim applies itself must not start before MPI's lock
// is really held, or it could land inside another origin's exclusive epoch:
// a one-byte get, flushed, makes MPI acquire it.
int ManagedWindow::confirm_epoch(int target) {
  Epoch& epoch = epochs_[static_cast<std::size_t>(target)];
  if (epoch != Epoch::unconfirmed) return MPI_SUCCESS;
  unsigned char probe = 0;
  SHIM_RMA_TRY(PMPI_Get(&probe, 1, MPI_BYTE, target, 0, 1, MPI_BYTE, user_));
  SHIM_RMA_TRY(PMPI_Win_flush(target, user_));
  epoch = Epoch::confirmed;
  return MPI_SUCCESS;
}

int ManagedWindow::accumulate(const AccumulateCall& call, MPI_Request* request) {
  if (call.target == MPI_PROC_NULL) return request != nullptr ? completed_request(request) : MPI_SUCCESS;
  if (call.target < 0 || static_cast<std::size_t>(call.target) >= targets_.size()) return MPI_ERR_RANK;
  if (!accumulate_op(call.op)) return MPI_ERR_OP;
  if (call.target_count < 0 || call.origin_count < 0 || call.result_count < 0) return MPI_ERR_COUNT;
  int rc = MPI_SUCCESS;
  DatatypeLayout* target_layout = datatype_layout(call.target_type, rc);
  if (target_layout == nullptr) return MPI_ERR_TYPE;
  const MPI_Datatype basic = target_layout->basic;
  const std::int64_t bytes = call.target_count * target_layout->size;
  const bool uses_origin = call.op != MPI_NO_OP;
  const DatatypeLayout* origin_layout = nullptr;
  if (uses_origin) {
    origin_layout = datatype_layout(call.origin_type, rc);
    if (origin_layout == nullptr || origin_layout->basic != basic ||
        call.origin_count * origin_layout->size != bytes) {
      return MPI_ERR_TYPE;
    }
  }
  const DatatypeLayout* result_layout = nullptr;
  if (call.fetch) {
    result_layout = datatype_layout(call.result_type, rc);
    if (result_layout == nullptr || result_layout->basic != basic || call.result_count * result_layout->size != bytes) {
      return MPI_ERR_TYPE;
    }
  }
  if (!op_defined_on(call.op, basic)) return MPI_ERR_OP;
  if (bytes == 0) return request != nullptr ? completed_request(request) : MPI_SUCCESS;

  const Target& target = targets_[static_cast<std::size_t>(call.target)];
  const std::int64_t offset = static_cast<std::int64_t>(call.displacement) * target.disp_unit;
  std::int64_t low = 0, high = 0;
  touched_span(*target_layout, call.target_count, low, high);
  if (offset + low < 0 || offset + high > target.bytes) return MPI_ERR_RMA_RANGE;
  SHIM_RMA_TRY(compute_runs(call.target_type, *target_layout));

  // The origin's elements in packed order; dense data is used in place.
  std::vector<unsigned char> packed_origin;
  const unsigned char* stream = nullptr;
  if (uses_origin) {
    if (origin_layout->dense) {
      stream = static_cast<const unsigned char*>(call.origin);
    } else {
      packed_origin.resize(static_cast<std::size_t>(bytes));
      MPI_Count position = 0;
      SHIM_RMA_TRY(PMPI_Pack_c(call.origin, call.origin_count, call.origin_type, packed_origin.data(), bytes,
                               &position, MPI_COMM_SELF));
      stream = packed_origin.data();
    }
  }
  std::shared_ptr<ResultAssembly> result;
  if (call.fetch) {
    result = std::make_shared<ResultAssembly>();
    result->packed.resize(static_cast<std::size_t>(bytes));
    result->result = call.result;
    result->result_count = call.result_count;
    result->result_type = call.result_type;
  }

  std::unique_lock lock(mutex_);
  if (epochs_[static_cast<std::size_t>(call.target)] == Epoch::unconfirmed) SHIM_RMA_TRY(confirm_epoch(call.target));
  if (decision_.path == AccumulatePath::caller) {
    SHIM_RMA_TRY(apply_caller(call, *target_layout, stream, bytes, result ? result->packed.data() : nullptr));
  } else {
    SHIM_RMA_TRY(apply_owner(call, *target_layout, stream, bytes, result, result ? result->packed.data() : nullptr));
  }
  if (result && result->replies_left == 0) SHIM_RMA_TRY(result->finish());
  if (result && !result->done && request != nullptr) {
    // A request-based fetch completes when its result is in.
    while (!result->done) SHIM_RMA_TRY(wait_in_flight(in_flight_.size() - 1));
  }
  lock.unlock();
  return request != nullptr ? completed_request(request) : MPI_SUCCESS;
}

int ManagedWindow::apply_owner(const AccumulateCall& call, const DatatypeLayout& target_layout,
                               const unsigned char* stream, std::int64_t bytes,
                               const std::shared_ptr<ResultAssembly>& result, unsigned char* old_stream) {
  const Target& target = targets_[static_cast<std::size_t>(call.target)];
  const std::int64_t offset = static_cast<std::int64_t>(call.displacement) * target.disp_unit;
  if (result && !target.same_node && !predefined_type(call.result_type)) {
    // The reply is unpacked with the user's result type: keep it alive even
    // if the user frees it before completion.
    SHIM_RMA_TRY(PMPI_Type_dup(call.result_type, &result->result_type));
    result->owns_type = true;
  }
  std::vector<ByteRun> runs;
  for (std::int64_t first = 0; first < bytes;) {
    const std::int64_t take = chunk_bytes(target_layout, first, bytes - first, runs);
    const unsigned char* chunk = stream != nullptr ? stream + first : nullptr;
    unsigned char* old_chunk = old_stream != nullptr ? old_stream + first : nullptr;
    if (target.same_node) {
      // NO_OP reads: combine() ignores the origin, which may be absent.
      std::vector<unsigned char> none;
      if (chunk == nullptr) {
        none.resize(static_cast<std::size_t>(take));
        chunk = none.data();
      }
      SHIM_RMA_TRY(memory_->apply(target.local, offset, runs, chunk, take, call.op, target_layout.basic, old_chunk,
                                  call.compare));
    } else {
      SHIM_RMA_TRY(ship(target, offset, runs, chunk, take, target_layout.basic, call.op, call.compare, result,
                        old_chunk));
    }
    first += take;
  }
  return MPI_SUCCESS;
}

int ManagedWindow::ship(const Target& target, std::int64_t target_offset, const std::vector<ByteRun>& runs,
                        const unsigned char* stream, std::int64_t bytes, MPI_Datatype basic, MPI_Op op,
                        const void* compare, const std::shared_ptr<ResultAssembly>& result,
                        unsigned char* result_slot) {
  const int server = target.server_world_rank;
  RequestHeader header{};
  header.kind = compare != nullptr ? RequestKind::compare_and_swap : RequestKind::accumulate;
  header.window_id = id_;
  header.target_local = target.local;
  header.run_count = static_cast<std::int32_t>(runs.size());
  header.basic = basic;
  header.op = op;
  header.target_offset = target_offset;
  header.data_bytes = bytes;
  header.payload_bytes = stream == nullptr ? 0 : (compare != nullptr ? 2 * bytes : bytes);
  if (result) header.flags = kWantResult;
  const std::size_t runs_bytes = runs.size() * sizeof(ByteRun);
  const std::size_t size = padded_request_bytes(runs.size(), header.payload_bytes);
  auto write = [&](unsigned char* out) {
    std::memcpy(out, &header, sizeof header);
    std::memcpy(out + sizeof header, runs.data(), runs_bytes);
    if (stream != nullptr) std::memcpy(out + sizeof header + runs_bytes, stream, static_cast<std::size_t>(bytes));
    if (compare != nullptr) {
      std::memcpy(out + sizeof header + runs_bytes + bytes, compare, static_cast<std::size_t>(bytes));
    }
  };
  if (!result && compare == nullptr && size <= static_cast<std::size_t>(kBatchBytes)) {
    const auto pending = batches_.find(server);
    if (pending != batches_.end() && pending->second.bytes.size() + size > static_cast<std::size_t>(kBatchBytes)) {
      SHIM_RMA_TRY(send_batch(server, false));
    }
    Batch& batch = batches_[server];
    batch.last = batch.bytes.size();
    batch.bytes.resize(batch.last + size);
    write(batch.bytes.data() + batch.last);
    return MPI_SUCCESS;
  }
  // What was batched for this server goes first: program order.
  SHIM_RMA_TRY(send_batch(server, false));
  if (!result && unflushed_[static_cast<std::size_t>(server)] + 1 >= kRequestsPerAck) header.flags = kWantAck;
  std::vector<unsigned char> message(size);
  write(message.data());
  return post(server, std::move(message), header.flags, result, result_slot, bytes);
}

int ManagedWindow::send_batch(int server, bool acknowledge) {
  const auto found = batches_.find(server);
  if (found == batches_.end() || found->second.bytes.empty()) return MPI_SUCCESS;
  Batch batch = std::move(found->second);
  batches_.erase(found);
  std::uint32_t flags = 0;
  if (acknowledge || unflushed_[static_cast<std::size_t>(server)] + 1 >= kRequestsPerAck) {
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

int ManagedWindow::post(int server, std::vector<unsigned char> message, std::uint32_t flags,
                        const std::shared_ptr<ResultAssembly>& result, unsigned char* result_slot,
                        std::int64_t result_bytes) {
  InFlight send;
  send.server = server;
  send.buffer = std::move(message);
  InFlight reply;
  reply.server = server;
  {
    std::lock_guard ship_lock(g_ship_mutex);
    if (flags & kWantResult) {
      reply.result = result;
      ++result->replies_left;
      SHIM_RMA_TRY(
          PMPI_Irecv_c(result_slot, result_bytes, MPI_BYTE, server, kTagReply, server_comm(), &reply.request));
    } else if (flags & kWantAck) {
      reply.ack = true;
      reply.buffer.resize(sizeof(std::int32_t));
      SHIM_RMA_TRY(PMPI_Irecv_c(reply.buffer.data(), static_cast<MPI_Count>(reply.buffer.size()), MPI_BYTE, server,
                                kTagReply, server_comm(), &reply.request));
    }
    SHIM_RMA_TRY(PMPI_Isend_c(send.buffer.data(), static_cast<MPI_Count>(send.buffer.size()), MPI_BYTE, server,
                              kTagRequest, server_comm(), &send.request));
  }
  int& unacknowledged = unflushed_[static_cast<std::size_t>(server)];
  unacknowledged = flags != 0 ? 0 : unacknowledged + 1;
  in_flight_.push_back(std::move(send));
  if (reply.request != MPI_REQUEST_NULL) in_flight_.push_back(std::move(reply));
  return in_flight_.size() > kMaxInFlight ? wait_in_flight(kMaxInFlight / 2) : MPI_SUCCESS;
}

// Waits for the oldest operations in flight until at most `keep` remain.
int ManagedWindow::wait_in_flight(std::size_t keep) {
  int rc = MPI_SUCCESS;
  while (in_flight_.size() > keep) {
    InFlight& oldest = in_flight_.front();
    const int wait_rc = PMPI_Wait(&oldest.request, MPI_STATUS_IGNORE);
    if (wait_rc != MPI_SUCCESS && rc == MPI_SUCCESS) rc = wait_rc;
    if (oldest.ack && rc == MPI_SUCCESS) {
      std::int32_t status = MPI_SUCCESS;
      std::memcpy(&status, oldest.buffer.data(), sizeof status);
      if (status != MPI_SUCCESS) rc = status;
    }
    if (oldest.result && --oldest.result->replies_left == 0) {
      const int finish_rc = oldest.result->finish();
      if (finish_rc != MPI_SUCCESS && rc == MPI_SUCCESS) rc = finish_rc;
    }
    in_flight_.pop_front();
  }
  return rc;
}

// Every server this process shipped to without an acknowledgement since:
// its pending batch goes with one, or a flush request asks for one; the
// acknowledgement means everything before it is applied.
int ManagedWindow::flush_servers() {
  while (!batches_.empty()) SHIM_RMA_TRY(send_batch(batches_.begin()->first, true));
  for (std::size_t server = 0; server < unflushed_.size(); ++server) {
    if (unflushed_[server] == 0) continue;
    RequestHeader header{};
    header.kind = RequestKind::flush;
    header.flags = kWantAck;
    header.window_id = id_;
    std::vector<unsigned char> message(sizeof header);
    std::memcpy(message.data(), &header, sizeof header);
    SHIM_RMA_TRY(post(static_cast<int>(server), std::move(message), kWantAck, nullptr, nullptr, 0));
  }
  return MPI_SUCCESS;
}

int ManagedWindow::complete_all() {
  std::lock_guard lock(mutex_);
  if (in_flight_.empty() && batches_.empty() &&
      std::all_of(unflushed_.begin(), unflushed_.end(), [](int n) { return n == 0; })) {
    return MPI_SUCCESS;
  }
  SHIM_RMA_TRY(flush_servers());
  return wait_in_flight(0);
}

// Caller-computes (seed 004): lock the target exclusively, get, compute
// here, put back, unlock. Every operation of the window takes this path, so
// MPI's exclusive lock is what makes the family atomic.
int ManagedWindow::apply_caller(const AccumulateCall& call, const DatatypeLayout& target_layout,
                                const unsigned char* stream, std::int64_t bytes, unsigned char* old_stream) {
  const Target& target = targets_[static_cast<std::size_t>(call.target)];
  const MPI_Aint displacement = call.displacement * target.disp_unit;
  const MPI_Datatype basic = target_layout.basic;
  MPI_Count basic_lb = 0, basic_extent = 0;
  PMPI_Type_get_extent_c(basic, &basic_lb, &basic_extent);
  const MPI_Count elements = bytes / target_layout.basic_size;
  // The target's elements in memory layout (pair types have padding), and
  // packed for combine().
  std::vector<unsigned char> native(static_cast<std::size_t>(elements * basic_extent));
  std::vector<unsigned char> packed(static_cast<std::size_t>(bytes));
  SHIM_RMA_TRY(PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, call.target, 0, caller_));
  int rc = PMPI_Get_c(native.data(), elements, basic, call.target, displacement, call.target_count,
                      call.target_type, caller_);
  if (rc == MPI_SUCCESS) rc = PMPI_Win_flush(call.target, caller_);
  MPI_Count position = 0;
  if (rc == MPI_SUCCESS) {
    rc = PMPI_Pack_c(native.data(), elements, basic, packed.data(), bytes, &position, MPI_COMM_SELF);
  }
  if (rc == MPI_SUCCESS) {
    if (call.compare != nullptr) {
      std::vector<unsigned char> previous(static_cast<std::size_t>(bytes));
      compare_and_swap(stream, call.compare, packed.data(), previous.data(), static_cast<int>(bytes));
      if (old_stream != nullptr) std::memcpy(old_stream, previous.data(), static_cast<std::size_t>(bytes));
    } else {
      if (old_stream != nullptr) std::memcpy(old_stream, packed.data(), static_cast<std::size_t>(bytes));
      rc = combine(call.op, basic, stream, packed.data(), elements);
    }
  }
  const bool writes = call.op != MPI_NO_OP;
  if (rc == MPI_SUCCESS && writes) {
    position = 0;
    rc = PMPI_Unpack_c(packed.data(), bytes, &position, native.data(), elements, basic, MPI_COMM_SELF);
    if (rc == MPI_SUCCESS) {
      rc = PMPI_Put_c(native.data(), elements, basic, call.target, displacement, call.target_count,
                      call.target_type, caller_);
    }
  }
  const int unlock_rc = PMPI_Win_unlock(call.target, caller_);
  return rc != MPI_SUCCESS ? rc : unlock_rc;
}

}  // namespace shim::rma
