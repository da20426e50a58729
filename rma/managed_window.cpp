#include "rma/managed_window.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/bottom_buffer.hpp"
#include "common/datatype_checks.hpp"
#include "common/local_comm.hpp"
#include "common/mpi_try.hpp"
#include "rma/caller_computes.hpp"
#include "rma/combine.hpp"
#include "rma/node_server.hpp"
#include "rma/op_acceptance.hpp"
#include "rma/protocol.hpp"
#include "rma/rma_runtime.hpp"

namespace shim::rma {

namespace {

std::atomic<std::uint32_t> g_window_counter{0};
int g_window_keyval = MPI_KEYVAL_INVALID;

int query_empty(void*, MPI_Status* status) {
  // Setting fields of a status MPI handed us cannot fail.
  static_cast<void>(PMPI_Status_set_elements(status, MPI_BYTE, 0));
  static_cast<void>(PMPI_Status_set_cancelled(status, 0));
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int free_nothing(void*) { return MPI_SUCCESS; }
int cancel_nothing(void*, int) { return MPI_SUCCESS; }

// The request a request-based call returns when the operation it stands for
// finished inside the call: already complete. Nothing for the others.
int finished(MPI_Request* request) {
  if (request == nullptr) return MPI_SUCCESS;
  SHIM_TRY(PMPI_Grequest_start(query_empty, free_nothing, cancel_nothing, nullptr, request));
  return PMPI_Grequest_complete(*request);
}

// Same-node chunks: the payload and its runs in at most this many bytes
// (large enough to amortise the locking, small enough to overlap packing).
constexpr std::int64_t kLocalChunkBytes = 256 * 1024 + 4096 * static_cast<std::int64_t>(sizeof(ByteRun));

// The largest payload of a chunk starting at `first` whose target runs and
// payload fit `capacity` bytes; at least one element (a compare-and-swap is
// one element, which with its comparand fits any server buffer).
std::int64_t chunk_bytes(const DatatypeLayout& layout, std::int64_t first, std::int64_t left, std::int64_t capacity,
                         std::vector<ByteRun>& runs) {
  const std::int64_t element = layout.basic_size;
  std::int64_t take =
      std::min(left, std::max(element, (capacity - static_cast<std::int64_t>(sizeof(ByteRun))) / element * element));
  for (;;) {
    runs.clear();
    runs_of_stream(layout, first, take, runs);
    const std::int64_t bytes = static_cast<std::int64_t>(runs.size() * sizeof(ByteRun)) + take;
    if (bytes <= capacity || take == element) return take;
    take = std::max(element, take / 2 / element * element);
  }
}

// A count and datatype MPICH would take for an origin, result or target
// buffer: MPI_ERR_COUNT or MPI_ERR_TYPE otherwise.
int check_buffer(MPI_Count count, MPI_Datatype type, DatatypeLayout*& layout) {
  if (count < 0) return MPI_ERR_COUNT;
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  int rc = MPI_SUCCESS;
  layout = datatype_layout(type, rc);
  return layout != nullptr ? MPI_SUCCESS : MPI_ERR_TYPE;
}

// Whether this process's node server (world rank `server`) is in the
// window's node group: only then can it reach the window's memory.
int server_in_node_group(int server, MPI_Comm node, bool& in_group) {
  OwnedGroup world_group, node_group;
  SHIM_TRY(PMPI_Comm_group(MPI_COMM_WORLD, world_group.out()));
  SHIM_TRY(PMPI_Comm_group(node, node_group.out()));
  int in_node = MPI_UNDEFINED;
  SHIM_TRY(PMPI_Group_translate_ranks(world_group.get(), 1, &server, node_group.get(), &in_node));
  in_group = in_node != MPI_UNDEFINED;
  return MPI_SUCCESS;
}

}  // namespace

struct ManagedWindow::Operands {
  DatatypeLayout* target = nullptr;
  DatatypeLayout* origin = nullptr;
  std::int64_t bytes = 0;      // packed bytes the call updates
  std::int64_t offset = 0;     // of the access, from the target segment's base
  ByteSpan touched;            // the target's bytes the call may touch
  MPI_Count result_count = 0;  // result datatypes the fetched bytes fill
};

int create_window_keyval() {
  return PMPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, ManagedWindow::delete_attribute_state, &g_window_keyval, nullptr);
}

void free_window_keyval() {
  // Windows still alive keep the keyval until they go (MPI's rule for keyvals).
  if (g_window_keyval != MPI_KEYVAL_INVALID) static_cast<void>(PMPI_Win_free_keyval(&g_window_keyval));
}

int ManagedWindow::create(const Creation& creation, const topo::Hierarchy& hierarchy, const PathRequest& request,
                          void* baseptr, MPI_Win* win) {
  std::unique_ptr<ManagedWindow> w(new ManagedWindow);
  w->flavor_ = creation.flavor;
  w->locks_held_on_return_ = creation.locks_held_on_return;
  SHIM_TRY(WindowPool::of(creation.comm, hierarchy, w->pool_));
  bool cross_memory = false;
  SHIM_TRY(w->find_memory(creation, cross_memory));
  bool servers_reach = false;
  SHIM_TRY(w->learn_targets(hierarchy, creation, servers_reach));

  const WindowFacts facts{request.path,  request.by_info_key, hierarchy.layout().nodes(),
                          servers_reach, servers_running(),   creation.flavor == Flavor::create,
                          cross_memory};
  const AccumulateRule& rule = accumulate_policy().choose(facts);
  w->path_ = rule.outcome;
  w->reason_ = AccumulatePolicy::explain(rule, facts);
  SHIM_TRY(w->create_windows(creation));
  if (w->path_ == AccumulatePath::owner && servers_running()) {
    w->channel_.emplace(w->id_, server_comm(), server_buffer_bytes());
    const int my_world = hierarchy.world_rank(w->rank_);
    if (local_server() != nullptr && server_of(my_world) == my_world) {
      local_server()->add_window(w->id_, w->memory_);
      w->hosts_server_ = true;
    }
  }
  // No request may reach a server before it knows the window.
  SHIM_TRY(PMPI_Barrier(w->pool_->comm()));
  SHIM_TRY(PMPI_Win_set_attr(w->user_.get(), g_window_keyval, w.get()));
  w->attached_ = true;
  *win = w->user_.get();
  if (creation.flavor == Flavor::allocate) *static_cast<void**>(baseptr) = w->base_;
  w.release();
  return MPI_SUCCESS;
}

// The window's memory on this node: carved from the pool for
// MPI_Win_allocate, the caller's own for MPI_Win_create (reached by the
// node's other processes through cross-memory attach, if the kernel allows).
int ManagedWindow::find_memory(const Creation& creation, bool& cross_memory) {
  std::vector<NodeSegment> node_view;
  if (creation.flavor == Flavor::create) {
    base_ = static_cast<unsigned char*>(creation.base);
    SHIM_TRY(pool_->locate(base_, creation.size, node_view));
    SHIM_TRY(pool_->cross_memory_allowed(cross_memory));
  } else {
    SHIM_TRY(pool_->carve(creation.size, carving_, node_view));
    carved_ = true;
    int node_rank = 0;
    SHIM_TRY(PMPI_Comm_rank(pool_->node(), &node_rank));
    base_ = node_view[static_cast<std::size_t>(node_rank)].mapped;
  }
  memory_ = std::make_shared<NodeMemory>(std::move(node_view), pool_->locks());
  return MPI_SUCCESS;
}

// What every process must know of every target: where it lives, its size
// and disp_unit, and whether its node's server can reach this window.
int ManagedWindow::learn_targets(const topo::Hierarchy& hierarchy, const Creation& creation, bool& servers_reach) {
  struct Announcement {
    std::int64_t bytes;
    std::uint64_t id;
    std::int32_t world_rank;
    std::int32_t local;
    std::int32_t disp_unit;
    std::int32_t server_reachable;
  };
  rank_ = hierarchy.rank();
  const int my_world = hierarchy.world_rank(rank_);
  int node_rank = 0;
  SHIM_TRY(PMPI_Comm_rank(pool_->node(), &node_rank));
  bool reachable = false;
  if (const int my_server = server_of(my_world); my_server >= 0) {
    SHIM_TRY(server_in_node_group(my_server, pool_->node(), reachable));
  }
  Announcement mine{creation.size, 0, my_world, node_rank, creation.disp_unit, reachable ? 1 : 0};
  if (rank_ == 0) mine.id = (std::uint64_t(static_cast<std::uint32_t>(my_world)) << 32) | g_window_counter++;
  const topo::Layout& layout = hierarchy.layout();
  std::vector<Announcement> all(static_cast<std::size_t>(layout.size()));
  SHIM_TRY(PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, pool_->comm()));
  id_ = all[0].id;
  servers_reach = true;
  targets_.resize(all.size());
  for (std::size_t r = 0; r < all.size(); ++r) {
    targets_[r] = {all[r].world_rank, server_of(all[r].world_rank),
                   all[r].local,      layout.same_node(rank_, static_cast<int>(r)),
                   all[r].disp_unit,  all[r].bytes};
    servers_reach = servers_reach && all[r].server_reachable != 0;
  }
  epochs_.assign(all.size(), Epoch::none);
  access_.started.assign(all.size(), 0);
  order_ = AccessOrder(all.size());
  return MPI_SUCCESS;
}

// The user's window over the memory, created with the user's info, so
// MPI_Win_get_info reports accumulate_ordering and accumulate_ops as given.
int ManagedWindow::create_windows(const Creation& creation) {
  if (creation.flavor == Flavor::allocate && creation.info != MPI_INFO_NULL) {
    char value[MPI_MAX_INFO_VAL + 1] = {};
    int length = MPI_MAX_INFO_VAL;
    int found = 0;
    SHIM_TRY(PMPI_Info_get_string(creation.info, "alloc_shm", &length, value, &found));
    // MPICH keeps its default for anything but "true" and "false".
    if (found && std::strcmp(value, "false") == 0) alloc_shm_ = "false";
  }
  SHIM_TRY(PMPI_Win_create(base_, creation.size, creation.disp_unit, creation.info, creation.comm, user_.out()));
  if (path_ != AccumulatePath::caller) return MPI_SUCCESS;
  SHIM_TRY(PMPI_Win_create(base_, creation.size, 1, MPI_INFO_NULL, pool_->comm(), caller_.out()));
  return PMPI_Win_set_errhandler(caller_.get(), MPI_ERRORS_RETURN);
}

ManagedWindow* ManagedWindow::of(MPI_Win win) {
  if (win == MPI_WIN_NULL || g_window_keyval == MPI_KEYVAL_INVALID) return nullptr;
  void* state = nullptr;
  int found = 0;
  if (PMPI_Win_get_attr(win, g_window_keyval, &state, &found) != MPI_SUCCESS || !found) return nullptr;
  return static_cast<ManagedWindow*>(state);
}

int ManagedWindow::free(MPI_Win* win) {
  ManagedWindow* w = of(*win);
  {
    // MPICH checks this before anything collective, so a process that
    // gets the error may close its epoch and call again.
    const std::lock_guard lock(w->mutex_);
    if (w->access_.blocks_free() || w->exposed_) return MPI_ERR_RMA_SYNC;
  }
  SHIM_TRY(w->complete_all());
  // Every origin has completed what it shipped here.
  SHIM_TRY(PMPI_Barrier(w->pool_->comm()));
  // The state leaves the window's attribute, then goes with what it holds.
  w->attached_ = false;
  if (const int rc = PMPI_Win_delete_attr(*win, g_window_keyval); rc != MPI_SUCCESS) {
    w->attached_ = true;
    return rc;
  }
  const std::unique_ptr<ManagedWindow> owner(w);
  *win = MPI_WIN_NULL;
  return owner->release();
}

int ManagedWindow::delete_attribute_state(MPI_Win, int, void* state, void*) {
  auto* window = static_cast<ManagedWindow*>(state);
  if (!window->attached_) return MPI_SUCCESS;  // free() took it over
  // The user's window is being freed past shim (PMPI_Win_free): MPI frees
  // that one, the state frees the rest.
  window->user_.release();
  delete window;
  return MPI_SUCCESS;
}

int ManagedWindow::release() {
  int rc = MPI_SUCCESS;
  auto keep_first = [&rc](int step) {
    if (rc == MPI_SUCCESS) rc = step;
  };
  if (hosts_server_) local_server()->remove_window(id_);
  hosts_server_ = false;
  keep_first(caller_.free());
  keep_first(user_.free());  // before the memory it lies over
  if (carved_) keep_first(pool_->give_back(carving_));
  carved_ = false;
  pool_.reset();  // the last window of a freed communicator takes the pool with it
  return rc;
}

// Nothing to report to from a destructor; free() reports.
ManagedWindow::~ManagedWindow() { static_cast<void>(release()); }

void ManagedWindow::note_lock(int target, bool nocheck) {
  const std::lock_guard lock(mutex_);
  ++access_.locks;
  if (target >= 0 && static_cast<std::size_t>(target) < epochs_.size()) {
    epochs_[static_cast<std::size_t>(target)] =
        nocheck || locks_held_on_return_ ? Epoch::confirmed : Epoch::unconfirmed;
  }
}

void ManagedWindow::note_lock_all(bool nocheck) {
  const std::lock_guard lock(mutex_);
  access_.lock_all = true;
  std::fill(epochs_.begin(), epochs_.end(), nocheck || locks_held_on_return_ ? Epoch::confirmed : Epoch::unconfirmed);
}

void ManagedWindow::note_unlock(int target) {
  const std::lock_guard lock(mutex_);
  if (access_.locks > 0) --access_.locks;
  if (target >= 0 && static_cast<std::size_t>(target) < epochs_.size()) {
    epochs_[static_cast<std::size_t>(target)] = Epoch::none;
    order_.mpi_completed(target);
  }
}

void ManagedWindow::note_unlock_all() {
  const std::lock_guard lock(mutex_);
  access_.lock_all = false;
  std::fill(epochs_.begin(), epochs_.end(), Epoch::none);
  order_.mpi_completed_all();
}

void ManagedWindow::note_fence(int assert_flags) {
  const std::lock_guard lock(mutex_);
  access_.fence = (assert_flags & MPI_MODE_NOSUCCEED) == 0;
  order_.mpi_completed_all();
}

int ManagedWindow::note_start(MPI_Group group) {
  OwnedGroup window_group;
  SHIM_TRY(PMPI_Win_get_group(user_.get(), window_group.out()));
  int members = 0;
  SHIM_TRY(PMPI_Group_size(group, &members));
  std::vector<int> ranks(static_cast<std::size_t>(members)), in_window(ranks.size());
  for (int i = 0; i < members; ++i) ranks[static_cast<std::size_t>(i)] = i;
  SHIM_TRY(PMPI_Group_translate_ranks(group, members, ranks.data(), window_group.get(), in_window.data()));
  const std::lock_guard lock(mutex_);
  std::fill(access_.started.begin(), access_.started.end(), std::uint8_t{0});
  for (const int rank : in_window) {
    if (rank >= 0 && static_cast<std::size_t>(rank) < access_.started.size()) {
      access_.started[static_cast<std::size_t>(rank)] = 1;
    }
  }
  return MPI_SUCCESS;
}

void ManagedWindow::note_post() {
  const std::lock_guard lock(mutex_);
  exposed_ = true;
}

void ManagedWindow::note_exposure_closed() {
  const std::lock_guard lock(mutex_);
  exposed_ = false;
}

void ManagedWindow::note_complete() {
  const std::lock_guard lock(mutex_);
  std::fill(access_.started.begin(), access_.started.end(), std::uint8_t{0});
  order_.mpi_completed_all();
}

// MPICH's ch3 device grants passive-target locks lazily, at the first
// operation or at unlock. An operation shim applies itself must not start
// before MPI's lock is really held, or it could land inside another origin's
// exclusive epoch: a one-byte get, flushed, makes MPI acquire it. Where
// MPI_Win_lock returns only with the lock held (ch4), epochs start confirmed.
int ManagedWindow::confirm_epoch(int target) {
  Epoch& epoch = epochs_[static_cast<std::size_t>(target)];
  if (epoch != Epoch::unconfirmed) return MPI_SUCCESS;
  unsigned char probe = 0;
  SHIM_TRY(PMPI_Get(&probe, 1, MPI_BYTE, target, 0, 1, MPI_BYTE, user_.get()));
  SHIM_TRY(PMPI_Win_flush(target, user_.get()));
  epoch = Epoch::confirmed;
  return MPI_SUCCESS;
}

// MPICH's own checks of the family, in its order: the arguments (origin,
// result, target rank, displacement, target, op; null buffers where MPICH
// looks at them, which differs between the calls), then the epoch. The
// operands follow in check_operands().
int ManagedWindow::check(const AccumulateCall& call, Operands& operands) const {
  const bool counted = call.form == AccumulateForm::counted;
  if (call.form == AccumulateForm::compare_and_swap &&
      (call.origin == nullptr || call.compare == nullptr || call.result == nullptr)) {
    return MPI_ERR_ARG;
  }
  // MPI_Get_accumulate ignores the origin under MPI_NO_OP; MPI_Accumulate
  // checks it, then refuses the op.
  if (call.op != MPI_NO_OP || !call.fetch) {
    SHIM_TRY(check_buffer(call.origin_count, call.origin_type, operands.origin));
    if (counted && null_buffer_rejected(call.origin, call.origin_count, call.origin_type)) return MPI_ERR_BUFFER;
  }
  DatatypeLayout* result = nullptr;
  if (call.fetch) {
    SHIM_TRY(check_buffer(call.result_count, call.result_type, result));
    if (counted && null_buffer_rejected(call.result, call.result_count, call.result_type)) return MPI_ERR_BUFFER;
  }
  if (call.target != MPI_PROC_NULL && (call.target < 0 || static_cast<std::size_t>(call.target) >= targets_.size())) {
    return MPI_ERR_RANK;
  }
  if (call.displacement < 0) return MPI_ERR_DISP;
  SHIM_TRY(check_buffer(call.target_count, call.target_type, operands.target));
  if (!accumulate_family_op(call.op) || (!call.fetch && call.op == MPI_NO_OP)) return MPI_ERR_OP;
  if (call.form == AccumulateForm::fetch_and_op &&
      ((call.op != MPI_NO_OP && call.origin == nullptr) || call.result == nullptr)) {
    return MPI_ERR_ARG;
  }
  // MPICH takes only named predefined types for these two, after the checks
  // above (a contiguous of 4 MPI_BYTE is refused where MPI_INT is taken).
  if (call.form == AccumulateForm::fetch_and_op || call.form == AccumulateForm::compare_and_swap) {
    if (!operands.target->named) return MPI_ERR_TYPE;
  }
  if (call.compare != nullptr) SHIM_TRY(check_compare_and_swap(operands.target->basic));
  if (call.target == MPI_PROC_NULL) return MPI_SUCCESS;  // operands.bytes stays 0: nothing to do
  if (!access_.open_to(call.target)) return MPI_ERR_RMA_SYNC;
  // (Operands that hold no data move nothing, whatever their types, and
  // MPICH takes them.)
  const bool target_empty = call.target_count * operands.target->size == 0;
  if (result != nullptr && result->basic != operands.target->basic &&
      !(target_empty && call.result_count * result->size == 0)) {
    return MPI_ERR_TYPE;
  }
  return check_operands(call, operands);
}

// What MPICH 4.0.2 goes ahead with but shim refuses, each with the class MPI
// gives it: operands of different predefined types (MPICH reads the origin
// as the target's type, past its end if it is shorter; MPICH 4.1 and later
// refuse these too), a result buffer shorter than what is fetched (MPICH
// writes past it), an op MPICH has no kernel for on the type (MPICH's
// target then never completes the epoch, or leaves the target unchanged),
// and memory outside the target's window (MPICH writes past the window;
// here that memory belongs to another window). Origin and target of one
// type but different lengths: MPICH applies as many elements as the shorter
// one holds, and so does shim.
int ManagedWindow::check_operands(const AccumulateCall& call, Operands& operands) const {
  const DatatypeLayout& target_layout = *operands.target;
  const MPI_Datatype basic = target_layout.basic;
  operands.bytes = call.target_count * target_layout.size;
  if (operands.origin != nullptr) {
    if (operands.origin->basic != basic &&
        (call.origin_count * operands.origin->size > 0 || call.target_count * target_layout.size > 0)) {
      return MPI_ERR_TYPE;
    }
    operands.bytes = std::min<std::int64_t>(operands.bytes, call.origin_count * operands.origin->size);
  }
  if (call.fetch) {
    // Results are unpacked in whole result datatypes.
    int rc = MPI_SUCCESS;
    const DatatypeLayout* result = datatype_layout(call.result_type, rc);
    if (call.result_count * result->size < operands.bytes || (result->size > 0 && operands.bytes % result->size != 0)) {
      return MPI_ERR_TYPE;
    }
    operands.result_count = result->size > 0 ? operands.bytes / result->size : 0;
  }
  SHIM_TRY(check_op(call.op, basic, call.fetch));
  if (operands.bytes == 0) return MPI_SUCCESS;
  if (!byte_offset(call.target, call.displacement, operands.offset)) return MPI_ERR_RMA_RANGE;
  const Target& target = targets_[static_cast<std::size_t>(call.target)];
  const std::int64_t items = operands.bytes / target_layout.size + (operands.bytes % target_layout.size != 0);
  operands.touched =
      items_span(operands.offset, items, target_layout.extent, target_layout.true_lb, target_layout.true_extent);
  if (operands.touched.begin < 0 || operands.touched.end > target.bytes) return MPI_ERR_RMA_RANGE;
  return MPI_SUCCESS;
}

bool ManagedWindow::byte_offset(int target, MPI_Aint displacement, std::int64_t& offset) const {
  return !__builtin_mul_overflow(static_cast<std::int64_t>(displacement),
                                 targets_[static_cast<std::size_t>(target)].disp_unit, &offset);
}

int ManagedWindow::accumulate(const AccumulateCall& call, MPI_Request* request) {
  Operands operands;
  {
    // The epochs change under the same lock.
    const std::lock_guard lock(mutex_);
    SHIM_TRY(check(call, operands));
  }
  if (operands.bytes == 0) return finished(request);
  SHIM_TRY(compute_runs(call.target_type, *operands.target));

  // The origin's elements in packed order; dense data is used in place.
  std::vector<unsigned char> packed_origin;
  const unsigned char* stream = nullptr;
  if (operands.origin != nullptr && operands.origin->dense) {
    stream = static_cast<const unsigned char*>(call.origin);
  } else if (operands.origin != nullptr) {
    // All of the origin, of which the first operands.bytes are applied.
    const MPI_Count origin_bytes = call.origin_count * operands.origin->size;
    packed_origin.resize(static_cast<std::size_t>(origin_bytes));
    MPI_Count position = 0;
    RebasedBuffer user;  // MPI_BOTTOM under absolute addresses (ARMCI-MPI's direct IOV method)
    SHIM_TRY(rebase_bottom(call.origin, call.origin_type, user));
    SHIM_TRY(PMPI_Pack_c(user.base, call.origin_count, user.type, packed_origin.data(), origin_bytes, &position,
                         local_comm()));
    stream = packed_origin.data();
  }
  std::shared_ptr<ResultAssembly> result;
  if (call.fetch) {
    result = std::make_shared<ResultAssembly>();
    result->keep(call.result, operands.result_count, call.result_type, operands.bytes);
  }

  const std::lock_guard lock(mutex_);
  SHIM_TRY(confirm_epoch(call.target));
  SHIM_TRY(complete_mpi_access(call.target, operands.touched));
  if (path_ == AccumulatePath::caller) {
    SHIM_TRY(apply_caller(caller_.get(), call, operands.offset, *operands.target, stream, operands.bytes,
                          result ? result->packed.data() : nullptr));
  } else {
    SHIM_TRY(apply_owner(call, operands, stream, result));
  }
  if (result && result->replies_left == 0) SHIM_TRY(result->finish());
  // A request-based fetch completes when its result is in. Any other
  // request-based call shipped to a server completes when applied there:
  // MPI asks only for local completion, but MPICH completes these requests
  // on the target's acknowledgement, and codes rely on it (BAGEL accumulates
  // with MPI_Raccumulate + MPI_Wait, then tells the owner by a message that
  // it may read).
  if (request != nullptr && result && !result->done) SHIM_TRY(channel_->wait_for(*result));
  if (request != nullptr && !result && path_ == AccumulatePath::owner && !same_node(call.target)) {
    SHIM_TRY(complete_shipped());
  }
  return finished(request);
}

int ManagedWindow::apply_owner(const AccumulateCall& call, const Operands& operands, const unsigned char* stream,
                               const std::shared_ptr<ResultAssembly>& result) {
  const Target& target = targets_[static_cast<std::size_t>(call.target)];
  const DatatypeLayout& layout = *operands.target;
  if (result && !target.same_node) SHIM_TRY(result->hold_type());
  unsigned char* old_stream = result ? result->packed.data() : nullptr;
  // A request for another node, with its header, fits one server buffer.
  const std::int64_t capacity = target.same_node ? kLocalChunkBytes
                                                 : request_capacity(server_buffer_bytes()) -
                                                       static_cast<std::int64_t>(sizeof(RequestHeader)) - 16;
  std::vector<ByteRun> runs;
  for (std::int64_t first = 0; first < operands.bytes;) {
    const std::int64_t take = chunk_bytes(layout, first, operands.bytes - first, capacity, runs);
    const unsigned char* chunk = stream != nullptr ? stream + first : nullptr;
    unsigned char* old_chunk = old_stream != nullptr ? old_stream + first : nullptr;
    if (target.same_node) {
      // NO_OP reads: combine() ignores the origin, which may be absent.
      std::vector<unsigned char> none;
      if (chunk == nullptr) {
        none.resize(static_cast<std::size_t>(take));
        chunk = none.data();
      }
      SHIM_TRY(memory_->apply(target.local, operands.offset, runs, chunk, take, call.op, layout.basic, old_chunk,
                              call.compare));
    } else {
      SHIM_TRY(channel_->ship({target.server_world_rank, target.local, operands.offset, runs, chunk, take, layout.basic,
                               call.op, call.compare, result, old_chunk}));
    }
    first += take;
  }
  if (!target.same_node) order_.shim_issued(call.target, operands.touched);
  return MPI_SUCCESS;
}

int ManagedWindow::complete_all() {
  const std::lock_guard lock(mutex_);
  return complete_shipped();
}

int ManagedWindow::complete_shipped() {
  if (!channel_) return MPI_SUCCESS;
  SHIM_TRY(channel_->complete());
  order_.shim_completed_all();
  return MPI_SUCCESS;
}

// MPI's puts and gets on the window may still be in flight after a local
// flush; one that overlaps the accumulate is completed at its target
// first, which MPI allows only inside a passive-target epoch (in an active
// one the two conflict within an epoch, which MPI makes erroneous).
int ManagedWindow::complete_mpi_access(int target, const ByteSpan& touched) {
  if (!order_.mpi_in_flight(target, touched) || epochs_[static_cast<std::size_t>(target)] == Epoch::none) {
    return MPI_SUCCESS;
  }
  SHIM_TRY(PMPI_Win_flush(target, user_.get()));
  order_.mpi_completed(target);
  return MPI_SUCCESS;
}

int ManagedWindow::order_mpi_access(int target, MPI_Aint displacement, MPI_Count count, MPI_Datatype type) {
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  // Arguments MPI will refuse are left for MPI to report.
  if (target < 0 || static_cast<std::size_t>(target) >= targets_.size() || count <= 0 ||
      PMPI_Type_get_extent_c(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent_c(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    return MPI_SUCCESS;
  }
  std::int64_t offset = 0;
  const ByteSpan touched =
      byte_offset(target, displacement, offset) ? items_span(offset, count, extent, true_lb, true_extent) : kEverything;
  const std::lock_guard lock(mutex_);
  if (order_.shim_in_flight(target, touched)) SHIM_TRY(complete_shipped());
  order_.mpi_issued(target, touched);
  return MPI_SUCCESS;
}

void ManagedWindow::note_flush(int target) {
  const std::lock_guard lock(mutex_);
  if (target >= 0 && static_cast<std::size_t>(target) < targets_.size()) order_.mpi_completed(target);
}

void ManagedWindow::note_flush_all() {
  const std::lock_guard lock(mutex_);
  order_.mpi_completed_all();
}

}  // namespace shim::rma
