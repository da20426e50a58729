#include "rma/window_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>

#include "common/mpi_try.hpp"
#include "common/node_shared_memory.hpp"

namespace shim::rma {

namespace {

int g_pool_keyval = MPI_KEYVAL_INVALID;

// What another process reads to learn whether the kernel lets it.
const unsigned char g_readable_byte = 1;

// Where a process of the node has something: its pid and an address there.
struct ProcessAddress {
  std::int64_t pid;
  std::uint64_t address;
  std::int64_t bytes;
};

int gather_addresses(MPI_Comm node, const ProcessAddress& mine, std::vector<ProcessAddress>& all, int& node_rank) {
  int node_size = 0;
  SHIM_TRY(PMPI_Comm_size(node, &node_size));
  SHIM_TRY(PMPI_Comm_rank(node, &node_rank));
  all.resize(static_cast<std::size_t>(node_size));
  return PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
}

// Window memory starts on cache lines of its own, like MPICH's segments.
constexpr std::int64_t kAlignment = 64;
constexpr std::int64_t kPage = 4096;
// Chunks grow 256 KiB, 512 KiB, ... up to 16 MiB per process, so a long run
// of windows needs few of them (each costs a communicator context); a window
// larger than that gets a chunk of its own size.
constexpr std::int64_t kFirstChunk = 256 * 1024;
constexpr int kGrowthSteps = 6;
// One idle chunk of at most this much per process stays for the next
// windows: codes that create and free windows over and over reuse it.
constexpr std::int64_t kKeptIdle = 16 * 1024 * 1024;

std::int64_t pages(std::int64_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

int delete_pool(MPI_Comm, int, void* holder, void*) {
  delete static_cast<std::shared_ptr<WindowPool>*>(holder);
  return MPI_SUCCESS;
}

}  // namespace

int WindowPool::create_keyval() {
  return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_pool, &g_pool_keyval, nullptr);
}

void WindowPool::free_keyval() {
  if (g_pool_keyval == MPI_KEYVAL_INVALID) return;
  // The predefined communicators outlive shim: their pools go now. Deleting
  // an attribute whose callback returns success, and freeing a keyval, can
  // only fail on invalid arguments, and these are valid.
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* holder = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, g_pool_keyval, &holder, &found) == MPI_SUCCESS && found) {
      static_cast<void>(PMPI_Comm_delete_attr(comm, g_pool_keyval));
    }
  }
  static_cast<void>(PMPI_Comm_free_keyval(&g_pool_keyval));
}

int WindowPool::of(MPI_Comm comm, const topo::Hierarchy& hierarchy, std::shared_ptr<WindowPool>& out) {
  void* cached = nullptr;
  int found = 0;
  SHIM_TRY(PMPI_Comm_get_attr(comm, g_pool_keyval, &cached, &found));
  if (found) {
    out = *static_cast<std::shared_ptr<WindowPool>*>(cached);
    return MPI_SUCCESS;
  }
  std::shared_ptr<WindowPool> pool(new WindowPool);
  SHIM_TRY(PMPI_Comm_dup(comm, pool->comm_.out()));
  // shim's own steps report to shim, which raises on the user's handler once.
  SHIM_TRY(PMPI_Comm_set_errhandler(pool->comm(), MPI_ERRORS_RETURN));
  SHIM_TRY(PMPI_Comm_dup(hierarchy.node(), pool->node_.out()));
  SHIM_TRY(allocate_lock_words(pool->node(), pool->lock_words_));
  auto holder = std::make_unique<std::shared_ptr<WindowPool>>(pool);
  SHIM_TRY(PMPI_Comm_set_attr(comm, g_pool_keyval, holder.get()));
  holder.release();
  out = std::move(pool);
  return MPI_SUCCESS;
}

StripeLocks WindowPool::locks() const {
  return StripeLocks(reinterpret_cast<std::uint32_t*>(lock_words_->segments()[0].base));
}

int WindowPool::cross_memory_allowed(bool& allowed) {
  if (!cross_memory_) {
    const ProcessAddress mine{getpid(), reinterpret_cast<std::uintptr_t>(&g_readable_byte), 1};
    std::vector<ProcessAddress> all;
    int node_rank = 0;
    SHIM_TRY(gather_addresses(node(), mine, all, node_rank));
    int readable = 1;
    for (std::size_t p = 0; p < all.size(); ++p) {
      if (static_cast<int>(p) == node_rank) continue;
      readable = readable && can_read(static_cast<pid_t>(all[p].pid), all[p].address, 1);
    }
    SHIM_TRY(PMPI_Allreduce(MPI_IN_PLACE, &readable, 1, MPI_INT, MPI_LAND, comm()));
    cross_memory_ = readable != 0;
  }
  allowed = *cross_memory_;
  return MPI_SUCCESS;
}

int WindowPool::locate(void* base, std::int64_t bytes, std::vector<NodeSegment>& node_view) {
  const ProcessAddress mine{getpid(), reinterpret_cast<std::uintptr_t>(base), bytes};
  std::vector<ProcessAddress> all;
  int node_rank = 0;
  SHIM_TRY(gather_addresses(node(), mine, all, node_rank));
  node_view.assign(all.size(), NodeSegment{});
  for (std::size_t p = 0; p < all.size(); ++p) {
    NodeSegment& segment = node_view[p];
    segment.bytes = all[p].bytes;
    if (static_cast<int>(p) == node_rank) {
      segment.mapped = static_cast<unsigned char*>(base);
    } else {
      segment.other = {static_cast<pid_t>(all[p].pid), static_cast<std::uintptr_t>(all[p].address), all[p].bytes};
    }
  }
  return MPI_SUCCESS;
}

int WindowPool::carve(std::int64_t bytes, Carving& mine, std::vector<NodeSegment>& node_view) {
  // Each process says which chunks could hold its part (a bit per chunk)
  // and how much it needs; the lowest chunk where all fit takes the window.
  const std::size_t words = chunks_.size() / 64 + 1;
  std::vector<std::int64_t> said(words + 1, 0);
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    if (chunks_[c].memory && chunks_[c].allocator.fits(bytes)) said[c / 64] |= std::int64_t{1} << (c % 64);
  }
  said[words] = bytes;
  int node_size = 0;
  SHIM_TRY(PMPI_Comm_size(node(), &node_size));
  std::vector<std::int64_t> all(said.size() * static_cast<std::size_t>(node_size));
  SHIM_TRY(PMPI_Allgather(said.data(), static_cast<int>(said.size()), MPI_INT64_T, all.data(),
                          static_cast<int>(said.size()), MPI_INT64_T, node()));
  std::vector<std::int64_t> everyone_fits(words, -1);
  std::int64_t largest = 0;
  for (int p = 0; p < node_size; ++p) {
    const std::int64_t* theirs = all.data() + static_cast<std::size_t>(p) * said.size();
    for (std::size_t w = 0; w < words; ++w) everyone_fits[w] &= theirs[w];
    largest = std::max(largest, theirs[words]);
  }
  node_view.assign(static_cast<std::size_t>(node_size), NodeSegment{});
  mine = {};
  if (largest == 0) return MPI_SUCCESS;  // nobody needs memory
  int chunk = -1;
  for (std::size_t w = 0; w < words && chunk < 0; ++w) {
    if (everyone_fits[w] != 0)
      chunk = static_cast<int>(w * 64) + std::countr_zero(static_cast<std::uint64_t>(everyone_fits[w]));
  }
  if (chunk < 0) SHIM_TRY(add_chunk(bytes, largest, chunk));
  Chunk& c = chunks_[static_cast<std::size_t>(chunk)];
  const std::optional<std::int64_t> offset = c.allocator.take(bytes);
  if (!offset) return MPI_ERR_INTERN;  // every process said it fits
  mine = {chunk, *offset, bytes};
  ++c.windows;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(node_size));
  const std::int64_t my_offset = bytes > 0 ? *offset : -1;
  if (const int rc = PMPI_Allgather(&my_offset, 1, MPI_INT64_T, offsets.data(), 1, MPI_INT64_T, node());
      rc != MPI_SUCCESS) {
    static_cast<void>(give_back(mine));  // every process failed alike: the same chunk goes back everywhere
    return rc;
  }
  for (int p = 0; p < node_size; ++p) {
    const std::size_t i = static_cast<std::size_t>(p);
    if (offsets[i] < 0) continue;
    node_view[i].mapped = c.memory->segments()[i].base + offsets[i];
    node_view[i].bytes = all[i * said.size() + words];
  }
  return MPI_SUCCESS;
}

// A chunk big enough for this process's `bytes` and grown with the chunks
// before it; every process of the node makes it at once (collective).
int WindowPool::add_chunk(std::int64_t bytes, std::int64_t largest_request, int& chunk) {
  const std::int64_t grown =
      kFirstChunk << std::min<std::int64_t>(static_cast<std::int64_t>(chunks_.size()), kGrowthSteps);
  std::unique_ptr<SharedSegments> memory;
  // Each process's segment on pages of its own, like the memory
  // MPI_Win_allocate returns: no page shared between processes.
  const std::int64_t segment = std::max(grown, pages(bytes));
  SHIM_TRY(SharedSegments::allocate(node(), segment, 1, true, memory));
  const auto slot = std::find_if(chunks_.begin(), chunks_.end(), [](const Chunk& c) { return !c.memory; });
  Chunk& c = slot != chunks_.end() ? *slot : chunks_.emplace_back();
  c.memory = std::move(memory);
  c.allocator = RangeAllocator(segment, kAlignment);
  c.windows = 0;
  c.largest_segment = std::max(grown, pages(largest_request));
  chunk = static_cast<int>(&c - chunks_.data());
  return MPI_SUCCESS;
}

int WindowPool::give_back(const Carving& carving) {
  if (carving.chunk < 0) return MPI_SUCCESS;
  Chunk& c = chunks_[static_cast<std::size_t>(carving.chunk)];
  c.allocator.give_back(carving.offset, carving.bytes);
  if (--c.windows > 0) return MPI_SUCCESS;
  // Idle chunks: the largest that is small enough stays, the others go.
  // Window counts and sizes are the same on every process of the node, so
  // all of them free the same chunks.
  const Chunk* kept = nullptr;
  for (const Chunk& idle : chunks_) {
    if (!idle.memory || idle.windows > 0 || idle.largest_segment > kKeptIdle) continue;
    if (kept == nullptr || idle.largest_segment > kept->largest_segment) kept = &idle;
  }
  int rc = MPI_SUCCESS;
  for (Chunk& idle : chunks_) {
    if (!idle.memory || idle.windows > 0 || &idle == kept) continue;
    if (const int freed = idle.memory->release(); rc == MPI_SUCCESS) rc = freed;
    idle.memory.reset();
  }
  return rc;
}

int WindowPool::release() {
  int rc = MPI_SUCCESS;
  for (Chunk& c : chunks_) {
    if (!c.memory) continue;
    if (const int freed = c.memory->release(); rc == MPI_SUCCESS) rc = freed;
  }
  chunks_.clear();
  if (lock_words_) {
    if (const int freed = lock_words_->release(); rc == MPI_SUCCESS) rc = freed;
  }
  for (OwnedComm* comm : {&node_, &comm_}) {
    if (const int freed = comm->free(); rc == MPI_SUCCESS) rc = freed;
  }
  return rc;
}

// Nothing to report to from a destructor.
WindowPool::~WindowPool() { static_cast<void>(release()); }

}  // namespace shim::rma
