#include "mirror/mirrored_window.hpp"

#include <algorithm>
#include <cstring>

#include "mirror/mirror_error.hpp"
#include "mirror/sparse_merge.hpp"

namespace shim::mirror {

namespace {

// Stripes of about a page: an accumulate holds one lock per page it touches.
constexpr std::size_t kStripeBytes = 4096;

int free_comm(MPI_Comm& comm) {
  if (comm == MPI_COMM_NULL) return MPI_SUCCESS;
  return PMPI_Comm_free(&comm);
}

int free_window(MPI_Win& window) {
  if (window == MPI_WIN_NULL) return MPI_SUCCESS;
  PMPI_Win_unlock_all(window);
  return PMPI_Win_free(&window);
}

}  // namespace

int MirroredWindow::create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                           const topo::Hierarchy& hierarchy, bool per_process_segments,
                           std::unique_ptr<MirroredWindow>& out) {
  std::unique_ptr<MirroredWindow> window(new MirroredWindow());
  const int rc = window->allocate(count, type, kind, comm, hierarchy, per_process_segments);
  if (rc != MPI_SUCCESS) {
    window->release();
    return rc;
  }
  out = std::move(window);
  return MPI_SUCCESS;
}

int MirroredWindow::allocate(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                             const topo::Hierarchy& hierarchy, bool per_process_segments) {
  const topo::Layout& layout = hierarchy.layout();
  const int rank = hierarchy.rank();
  count_ = count;
  type_ = type;
  kind_ = kind;
  element_bytes_ = element_size(kind);
  node_ = layout.node_of(rank);
  nodes_ = layout.nodes();
  local_rank_ = layout.local_rank(rank);
  local_size_ = layout.ppn(node_);
  merge_slices_ = layout.min_ppn();
  blocks_ = BlockDistribution(count, local_size_);
  stripe_elements_ = static_cast<std::int64_t>(std::max<std::size_t>(1, kStripeBytes / element_bytes_));
  comm_rank_of_local_.assign(layout.members(node_).begin(), layout.members(node_).end());

  // Shared memory needs every node to be inside one host. Virtual nodes
  // (SHIM_NODE_SIZE) larger than a host would split across hosts: refuse on
  // every process alike rather than fail on some.
  MPI_Comm shared = MPI_COMM_NULL;
  if (int rc = PMPI_Comm_split_type(hierarchy.node(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
      rc != MPI_SUCCESS)
    return rc;
  int shared_size = 0;
  PMPI_Comm_size(shared, &shared_size);
  PMPI_Comm_free(&shared);
  int node_in_one_host = shared_size == local_size_ ? 1 : 0;
  if (int rc = PMPI_Allreduce(MPI_IN_PLACE, &node_in_one_host, 1, MPI_INT, MPI_MIN, comm); rc != MPI_SUCCESS)
    return rc;
  if (!node_in_one_host)
    return report_error(MPI_ERR_OTHER,
                      "shim_mirror_create: a node (" + hierarchy.node_source() +
                          ") spans processes that share no memory; a mirrored window needs each node's "
                          "processes on one host (is SHIM_NODE_SIZE larger than a host?)",
                        rank == 0);

  if (int rc = PMPI_Comm_dup(comm, &comm_); rc != MPI_SUCCESS) return rc;
  if (int rc = PMPI_Comm_dup(hierarchy.node(), &node_comm_); rc != MPI_SUCCESS) return rc;
  // Merge slices: local rank r < smallest node size merges slice r with its
  // counterparts, one per node; on uneven nodes the surplus ranks idle.
  const int color = local_rank_ < merge_slices_ ? local_rank_ : MPI_UNDEFINED;
  if (int rc = PMPI_Comm_split(comm, color, node_, &merge_comm_); rc != MPI_SUCCESS) return rc;

  const Range mine = blocks_.block(local_rank_);
  const auto extent = static_cast<MPI_Aint>(element_bytes_);
  void* base = nullptr;
  MPI_Info info = MPI_INFO_NULL;
  if (per_process_segments) {
    PMPI_Info_create(&info);
    PMPI_Info_set(info, "alloc_shared_noncontig", "true");
  }
  const int allocated = PMPI_Win_allocate_shared(mine.count * extent, static_cast<int>(extent), info, node_comm_,
                                                 &base, &data_win_);
  if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
  if (allocated != MPI_SUCCESS) {
    data_win_ = MPI_WIN_NULL;
    return allocated;
  }
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, data_win_);
  base_of_local_.resize(static_cast<std::size_t>(local_size_));
  contiguous_ = true;
  for (int local = 0; local < local_size_; ++local) {
    MPI_Aint size = 0;
    int unit = 0;
    void* peer = nullptr;
    if (int rc = PMPI_Win_shared_query(data_win_, local, &size, &unit, &peer); rc != MPI_SUCCESS) return rc;
    base_of_local_[static_cast<std::size_t>(local)] = static_cast<std::byte*>(peer);
    const Range theirs = blocks_.block(local);
    if (theirs.count > 0 && static_cast<std::byte*>(peer) != base_of_local_[0] + theirs.first * extent)
      contiguous_ = false;
  }

  void* lock_base = nullptr;
  const MPI_Aint lock_bytes = local_rank_ == 0 ? static_cast<MPI_Aint>(StripeLocks::kBytes) : 0;
  if (int rc = PMPI_Win_allocate_shared(lock_bytes, 1, MPI_INFO_NULL, node_comm_, &lock_base, &lock_win_);
      rc != MPI_SUCCESS) {
    lock_win_ = MPI_WIN_NULL;
    return rc;
  }
  PMPI_Win_lock_all(MPI_MODE_NOCHECK, lock_win_);
  MPI_Aint size = 0;
  int unit = 0;
  void* words = nullptr;
  if (int rc = PMPI_Win_shared_query(lock_win_, 0, &size, &unit, &words); rc != MPI_SUCCESS) return rc;
  if (local_rank_ == 0) std::memset(words, 0, StripeLocks::kBytes);
  locks_ = StripeLocks(static_cast<std::uint32_t*>(words));
  // A new window reads as zeros, like GA's created arrays.
  if (mine.count > 0) std::memset(base, 0, static_cast<std::size_t>(mine.count) * element_bytes_);
  PMPI_Win_sync(lock_win_);
  return sync();
}

int MirroredWindow::release() {
  int rc = MPI_SUCCESS;
  for (MPI_Win* window : {&lock_win_, &data_win_})
    if (int r = free_window(*window); r != MPI_SUCCESS && rc == MPI_SUCCESS) rc = r;
  for (MPI_Comm* comm : {&merge_comm_, &node_comm_})
    if (int r = free_comm(*comm); r != MPI_SUCCESS && rc == MPI_SUCCESS) rc = r;
  return rc;
}

MirroredWindow::~MirroredWindow() { free_comm(comm_); }

std::byte* MirroredWindow::address(std::int64_t index) const {
  if (contiguous_) return base_of_local_[0] + static_cast<std::size_t>(index) * element_bytes_;
  const int local = blocks_.owner(index);
  return base_of_local_[static_cast<std::size_t>(local)] +
         static_cast<std::size_t>(index - blocks_.block(local).first) * element_bytes_;
}

void MirroredWindow::for_each_piece(Range range,
                                    const std::function<void(std::byte*, std::int64_t, std::int64_t)>& visit) const {
  if (range.count == 0) return;
  if (contiguous_) {
    visit(address(range.first), 0, range.count);
    return;
  }
  std::int64_t index = range.first;
  while (index < range.end()) {
    const Range held = blocks_.block(blocks_.owner(index));
    const std::int64_t n = std::min(range.end(), held.end()) - index;
    visit(address(index), index - range.first, n);
    index += n;
  }
}

void MirroredWindow::get(Range range, void* buffer) const {
  auto* out = static_cast<std::byte*>(buffer);
  for_each_piece(range, [&](std::byte* piece, std::int64_t offset, std::int64_t n) {
    std::memcpy(out + static_cast<std::size_t>(offset) * element_bytes_, piece,
                static_cast<std::size_t>(n) * element_bytes_);
  });
}

void MirroredWindow::put(Range range, const void* buffer) {
  const auto* in = static_cast<const std::byte*>(buffer);
  for_each_piece(range, [&](std::byte* piece, std::int64_t offset, std::int64_t n) {
    std::memcpy(piece, in + static_cast<std::size_t>(offset) * element_bytes_,
                static_cast<std::size_t>(n) * element_bytes_);
  });
}

void MirroredWindow::accumulate(Range range, const void* buffer, const void* scale) {
  const auto* in = static_cast<const std::byte*>(buffer);
  // One stripe at a time, under its lock: atomic per element against every
  // other accumulate on the node, as MPI_Accumulate is.
  std::int64_t index = range.first;
  while (index < range.end()) {
    const std::int64_t stripe = index / stripe_elements_;
    const std::int64_t n = std::min(range.end(), (stripe + 1) * stripe_elements_) - index;
    const int lock = static_cast<int>(stripe % StripeLocks::kStripes);
    locks_.lock(lock);
    for_each_piece({index, n}, [&](std::byte* piece, std::int64_t offset, std::int64_t m) {
      scaled_add(kind_, piece, in + static_cast<std::size_t>(index - range.first + offset) * element_bytes_, scale,
                 static_cast<std::size_t>(m));
    });
    locks_.unlock(lock);
    index += n;
  }
}

int MirroredWindow::sync() {
  // MPI's shared-memory idiom: the window sync orders this process's stores
  // and loads, the barrier orders the processes.
  PMPI_Win_sync(data_win_);
  if (int rc = PMPI_Barrier(node_comm_); rc != MPI_SUCCESS) return rc;
  PMPI_Win_sync(data_win_);
  return MPI_SUCCESS;
}

int MirroredWindow::zero() {
  if (int rc = sync(); rc != MPI_SUCCESS) return rc;
  const Range mine = blocks_.block(local_rank_);
  if (mine.count > 0) std::memset(address(mine.first), 0, static_cast<std::size_t>(mine.count) * element_bytes_);
  return sync();
}

int MirroredWindow::with_contiguous(Range range, const std::function<int(std::byte*)>& work) {
  if (contiguous_ || range.count == 0 || blocks_.owner(range.first) == blocks_.owner(range.end() - 1))
    return work(range.count == 0 ? nullptr : address(range.first));
  std::vector<std::byte> scratch(static_cast<std::size_t>(range.count) * element_bytes_);
  get(range, scratch.data());
  const int rc = work(scratch.data());
  put(range, scratch.data());
  return rc;
}

int MirroredWindow::merge(Range range) {
  if (int rc = sync(); rc != MPI_SUCCESS) return rc;
  if (nodes_ > 1 && merge_comm_ != MPI_COMM_NULL) {
    // Every local rank sums its slice with its counterparts in parallel, so
    // all cores and all NICs of a node take part.
    const Range slice = share(range, merge_slices_, local_rank_);
    if (slice.count > 0) {
      const int rc = with_contiguous(slice, [&](std::byte* data) {
        return PMPI_Allreduce_c(MPI_IN_PLACE, data, slice.count, type_, MPI_SUM, merge_comm_);
      });
      if (rc != MPI_SUCCESS) return rc;
    }
  }
  return sync();
}

int MirroredWindow::merge_sparse(std::int64_t block) {
  if (int rc = sync(); rc != MPI_SUCCESS) return rc;
  if (nodes_ > 1 && merge_comm_ != MPI_COMM_NULL) {
    const Range slice = share({0, count_}, merge_slices_, local_rank_);
    const int rc = with_contiguous(slice, [&](std::byte* data) {
      const SliceBlocks shape{slice.count, block, element_bytes_};
      const std::vector<std::int64_t> ids = slice.count > 0 ? nonzero_blocks(shape, data) : std::vector<std::int64_t>{};
      const std::vector<std::byte> packed = pack_blocks(shape, data, ids);
      int members = 0;
      PMPI_Comm_size(merge_comm_, &members);
      // Per node: how many blocks, and how many bytes they pack to.
      std::vector<std::int64_t> sizes(2 * static_cast<std::size_t>(members));
      const std::int64_t mine[2] = {static_cast<std::int64_t>(ids.size()), static_cast<std::int64_t>(packed.size())};
      if (int r = PMPI_Allgather(mine, 2, MPI_INT64_T, sizes.data(), 2, MPI_INT64_T, merge_comm_); r != MPI_SUCCESS)
        return r;
      std::vector<MPI_Count> id_counts(members), byte_counts(members);
      std::vector<MPI_Aint> id_displs(members), byte_displs(members);
      std::vector<std::int64_t> id_offset(members + 1), data_offset(members);
      for (int n = 0; n < members; ++n) {
        id_counts[n] = sizes[2 * n];
        byte_counts[n] = sizes[2 * n + 1];
        id_offset[n + 1] = id_offset[n] + id_counts[n];
        id_displs[n] = static_cast<MPI_Aint>(id_offset[n]);
        byte_displs[n] = n == 0 ? 0 : byte_displs[n - 1] + static_cast<MPI_Aint>(byte_counts[n - 1]);
        data_offset[n] = byte_displs[n];
      }
      if (id_offset[members] == 0) return MPI_SUCCESS;  // every node's slice is zero
      std::vector<std::int64_t> all_ids(static_cast<std::size_t>(id_offset[members]));
      std::vector<std::byte> all_data(static_cast<std::size_t>(byte_displs[members - 1] + byte_counts[members - 1]));
      if (int r = PMPI_Allgatherv_c(ids.data(), static_cast<MPI_Count>(ids.size()), MPI_INT64_T, all_ids.data(),
                                    id_counts.data(), id_displs.data(), MPI_INT64_T, merge_comm_);
          r != MPI_SUCCESS)
        return r;
      if (int r = PMPI_Allgatherv_c(packed.data(), static_cast<MPI_Count>(packed.size()), MPI_BYTE, all_data.data(),
                                    byte_counts.data(), byte_displs.data(), MPI_BYTE, merge_comm_);
          r != MPI_SUCCESS)
        return r;
      fold_contributions(kind_, shape, data, {all_ids, id_offset, all_data, data_offset});
      return MPI_SUCCESS;
    });
    if (rc != MPI_SUCCESS) return rc;
  }
  return sync();
}

}  // namespace shim::mirror
