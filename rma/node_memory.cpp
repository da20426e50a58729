#include "rma/node_memory.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "common/mpi_try.hpp"
#include "rma/combine.hpp"

namespace shim::rma {

namespace {

constexpr int kStripeShift = 12;  // 4 KiB of a segment per stripe

// The stripes [begin, end) of segment `local` covers, as a bit set: taken in
// increasing order, so two appliers never wait on each other in a cycle.
std::uint64_t stripes_of(int local, std::int64_t begin, std::int64_t end) {
  constexpr int kStripes = shim::StripeLocks::kStripes;
  static_assert(kStripes == 64);
  const std::int64_t first = begin >> kStripeShift;
  const std::int64_t last = (end - 1) >> kStripeShift;
  if (last - first + 1 >= kStripes) return ~std::uint64_t{0};
  std::uint64_t set = 0;
  for (std::int64_t page = first; page <= last; ++page) {
    set |= std::uint64_t{1} << ((page + std::int64_t{local} * 17) & (kStripes - 1));
  }
  return set;
}

}  // namespace

void NodeMemory::lock(std::uint64_t stripes) {
  for (std::uint64_t left = stripes; left != 0; left &= left - 1) locks_.lock(std::countr_zero(left));
}

void NodeMemory::unlock(std::uint64_t stripes) {
  for (std::uint64_t left = stripes; left != 0; left &= left - 1) locks_.unlock(std::countr_zero(left));
}

int NodeMemory::apply(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin,
                      std::int64_t bytes, MPI_Op op, MPI_Datatype basic, void* old, const void* compare) {
  if (bytes == 0 || runs.empty()) return MPI_SUCCESS;
  MPI_Count element = 0, lb = 0, extent = 0;
  SHIM_TRY(PMPI_Type_size_c(basic, &element));
  SHIM_TRY(PMPI_Type_get_extent_c(basic, &lb, &extent));
  // Without padding inside an element (every type but the pair types),
  // runs hold whole elements, so each run can be updated where it lies,
  // under the locks of its own stripes only: MPI promises atomicity per
  // element, and a tile's rows then do not all wait for one another.
  const bool mapped = segment(local).mapped != nullptr;
  if (mapped && old == nullptr && compare == nullptr && (runs.size() == 1 || element == extent)) {
    return apply_in_place(local, offset, runs, static_cast<const unsigned char*>(origin), op, basic, element);
  }
  return apply_gathered(local, offset, runs, origin, bytes, op, basic, element, old, compare);
}

int NodeMemory::apply_in_place(int local, std::int64_t offset, std::span<const ByteRun> runs,
                               const unsigned char* origin, MPI_Op op, MPI_Datatype basic, MPI_Count element) {
  unsigned char* base = segment(local).mapped + offset;
  int rc = MPI_SUCCESS;
  for (const ByteRun& run : runs) {
    const std::uint64_t stripes = stripes_of(local, offset + run.offset, offset + run.offset + run.bytes);
    lock(stripes);
    if (rc == MPI_SUCCESS) rc = combine(op, basic, origin, base + run.offset, run.bytes / element);
    unlock(stripes);
    origin += run.bytes;
  }
  return rc;
}

// The target's elements gathered into packed order under the locks of every
// stripe the runs touch, updated, scattered back.
int NodeMemory::apply_gathered(int local, std::int64_t offset, std::span<const ByteRun> runs, const void* origin,
                               std::int64_t bytes, MPI_Op op, MPI_Datatype basic, MPI_Count element, void* old,
                               const void* compare) {
  std::int64_t low = runs.front().offset;
  std::int64_t high = low;
  for (const ByteRun& run : runs) {
    low = std::min(low, run.offset);
    high = std::max(high, run.offset + run.bytes);
  }
  std::vector<unsigned char> current(static_cast<std::size_t>(bytes));
  std::vector<unsigned char> previous(compare != nullptr ? static_cast<std::size_t>(bytes) : 0);
  const std::uint64_t stripes = stripes_of(local, offset + low, offset + high);
  lock(stripes);
  int rc = gather(local, offset, runs, current.data());
  if (rc == MPI_SUCCESS && compare != nullptr) {
    compare_and_swap(origin, compare, current.data(), previous.data(), static_cast<int>(bytes));
    if (old != nullptr) std::memcpy(old, previous.data(), static_cast<std::size_t>(bytes));
  } else if (rc == MPI_SUCCESS) {
    if (old != nullptr) std::memcpy(old, current.data(), static_cast<std::size_t>(bytes));
    rc = combine(op, basic, origin, current.data(), bytes / element);
  }
  // A read (MPI_NO_OP) leaves the target as it was.
  if (rc == MPI_SUCCESS && (op != MPI_NO_OP || compare != nullptr)) rc = scatter(local, offset, runs, current.data());
  unlock(stripes);
  return rc;
}

int NodeMemory::gather(int local, std::int64_t offset, std::span<const ByteRun> runs, unsigned char* packed) const {
  const NodeSegment& target = segment(local);
  if (target.mapped == nullptr) return read_runs(target.other, offset, runs, packed) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  for (const ByteRun& run : runs) {
    std::memcpy(packed, target.mapped + offset + run.offset, static_cast<std::size_t>(run.bytes));
    packed += run.bytes;
  }
  return MPI_SUCCESS;
}

int NodeMemory::scatter(int local, std::int64_t offset, std::span<const ByteRun> runs,
                        const unsigned char* packed) const {
  const NodeSegment& target = segment(local);
  if (target.mapped == nullptr)
    return write_runs(target.other, offset, runs, packed) == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  for (const ByteRun& run : runs) {
    std::memcpy(target.mapped + offset + run.offset, packed, static_cast<std::size_t>(run.bytes));
    packed += run.bytes;
  }
  return MPI_SUCCESS;
}

}  // namespace shim::rma
