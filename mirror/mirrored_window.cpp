#include "mirror/mirrored_window.hpp"

#include <algorithm>
#include <cstring>

#include "common/mpi_try.hpp"
#include "mirror/mirror_error.hpp"
#include "mirror/sparse_merge.hpp"

namespace shim::mirror {

namespace {

// Stripes of about a page: an accumulate holds one lock per page it touches.
constexpr std::size_t kStripeBytes = 4096;

// Shared memory needs every node to be inside one host. Virtual nodes
// (SHIM_NODE_SIZE) larger than a host would split across hosts: refuse on
// every process alike rather than fail on some.
int check_node_in_one_host(MPI_Comm comm, const topo::Hierarchy& hierarchy) {
  OwnedComm shared;
  SHIM_TRY(PMPI_Comm_split_type(hierarchy.node(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shared.out()));
  int shared_size = 0;
  SHIM_TRY(PMPI_Comm_size(shared.get(), &shared_size));
  const topo::Layout& layout = hierarchy.layout();
  int node_in_one_host = shared_size == layout.ppn(layout.node_of(hierarchy.rank())) ? 1 : 0;
  SHIM_TRY(PMPI_Allreduce(MPI_IN_PLACE, &node_in_one_host, 1, MPI_INT, MPI_MIN, comm));
  if (node_in_one_host) return MPI_SUCCESS;
  return report_error(MPI_ERR_OTHER,
                      "shim_mirror_create: a node (" + hierarchy.node_source() +
                          ") spans processes that share no memory; a mirrored window needs each node's "
                          "processes on one host (is SHIM_NODE_SIZE larger than a host?)",
                      hierarchy.rank() == 0);
}

// Each node's non-zero blocks of this slice go to every node of the merge
// rail, which folds them in node order.
int merge_sparse_slice(MPI_Comm rail, ElementKind kind, const SliceBlocks& shape, std::byte* data) {
  const std::vector<std::int64_t> ids = shape.elements > 0 ? nonzero_blocks(shape, data) : std::vector<std::int64_t>{};
  const std::vector<std::byte> packed = pack_blocks(shape, data, ids);
  int members = 0;
  SHIM_TRY(PMPI_Comm_size(rail, &members));
  // Per node: how many blocks, and how many bytes they pack to.
  std::vector<std::int64_t> sizes(2 * static_cast<std::size_t>(members));
  const std::int64_t mine[2] = {static_cast<std::int64_t>(ids.size()), static_cast<std::int64_t>(packed.size())};
  SHIM_TRY(PMPI_Allgather(mine, 2, MPI_INT64_T, sizes.data(), 2, MPI_INT64_T, rail));
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
  SHIM_TRY(PMPI_Allgatherv_c(ids.data(), static_cast<MPI_Count>(ids.size()), MPI_INT64_T, all_ids.data(),
                             id_counts.data(), id_displs.data(), MPI_INT64_T, rail));
  SHIM_TRY(PMPI_Allgatherv_c(packed.data(), static_cast<MPI_Count>(packed.size()), MPI_BYTE, all_data.data(),
                             byte_counts.data(), byte_displs.data(), MPI_BYTE, rail));
  fold_contributions(kind, shape, data, {all_ids, id_offset, all_data, data_offset});
  return MPI_SUCCESS;
}

}  // namespace

int MirroredWindow::create(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                           const topo::Hierarchy& hierarchy, bool per_process_segments,
                           std::unique_ptr<MirroredWindow>& out) {
  std::unique_ptr<MirroredWindow> window(new MirroredWindow());
  SHIM_TRY(window->allocate(count, type, kind, comm, hierarchy, per_process_segments));
  out = std::move(window);
  return MPI_SUCCESS;
}

void MirroredWindow::lay_out(std::int64_t count, MPI_Datatype type, ElementKind kind,
                             const topo::Hierarchy& hierarchy) {
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
}

int MirroredWindow::allocate(std::int64_t count, MPI_Datatype type, ElementKind kind, MPI_Comm comm,
                             const topo::Hierarchy& hierarchy, bool per_process_segments) {
  lay_out(count, type, kind, hierarchy);
  SHIM_TRY(check_node_in_one_host(comm, hierarchy));
  SHIM_TRY(PMPI_Comm_dup(comm, comm_.out()));
  SHIM_TRY(PMPI_Comm_dup(hierarchy.node(), node_comm_.out()));
  // Merge slices: local rank r < smallest node size merges slice r with its
  // counterparts, one per node; on uneven nodes the surplus ranks idle.
  const int color = local_rank_ < merge_slices_ ? local_rank_ : MPI_UNDEFINED;
  SHIM_TRY(PMPI_Comm_split(comm, color, node_, merge_comm_.out()));

  const Range mine = blocks_.block(local_rank_);
  const auto extent = static_cast<MPI_Aint>(element_bytes_);
  SHIM_TRY(NodeSharedMemory::allocate(node_comm_.get(), mine.count * extent, static_cast<int>(extent),
                                      per_process_segments, memory_));
  const std::span<const SharedSegment> segments = memory_->segments();
  base_of_local_.resize(segments.size());
  contiguous_ = true;
  for (int local = 0; local < local_size_; ++local) {
    std::byte* base = reinterpret_cast<std::byte*>(segments[static_cast<std::size_t>(local)].base);
    base_of_local_[static_cast<std::size_t>(local)] = base;
    const Range theirs = blocks_.block(local);
    if (theirs.count > 0 && base != base_of_local_[0] + theirs.first * extent) contiguous_ = false;
  }
  locks_ = memory_->locks();
  // A new window reads as zeros, like GA's created arrays.
  if (mine.count > 0) std::memset(memory_->mine(), 0, static_cast<std::size_t>(mine.count) * element_bytes_);
  return sync();
}

int MirroredWindow::release() {
  int rc = memory_ ? memory_->release() : MPI_SUCCESS;
  for (OwnedComm* comm : {&merge_comm_, &node_comm_}) {
    if (const int freed = comm->free(); rc == MPI_SUCCESS) rc = freed;
  }
  return rc;
}

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

int MirroredWindow::sync() { return memory_->sync(); }

int MirroredWindow::zero() {
  SHIM_TRY(sync());
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
  SHIM_TRY(sync());
  if (nodes_ > 1 && merge_comm_) {
    // Every local rank sums its slice with its counterparts in parallel, so
    // all cores and all NICs of a node take part.
    const Range slice = share(range, merge_slices_, local_rank_);
    if (slice.count > 0) {
      SHIM_TRY(with_contiguous(slice, [&](std::byte* data) {
        return PMPI_Allreduce_c(MPI_IN_PLACE, data, slice.count, type_, MPI_SUM, merge_comm_.get());
      }));
    }
  }
  return sync();
}

int MirroredWindow::merge_sparse(std::int64_t block) {
  SHIM_TRY(sync());
  if (nodes_ > 1 && merge_comm_) {
    const Range slice = share({0, count_}, merge_slices_, local_rank_);
    SHIM_TRY(with_contiguous(slice, [&](std::byte* data) {
      return merge_sparse_slice(merge_comm_.get(), kind_, {slice.count, block, element_bytes_}, data);
    }));
  }
  return sync();
}

}  // namespace shim::mirror
