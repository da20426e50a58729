#include "collectives/bcast_pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>

#include "common/message_tags.hpp"

namespace shim::coll {

namespace {

// Segments a rank keeps in flight from its parent, and per child.
constexpr std::int64_t kSegmentsInFlight = 8;

MPI_Aint address_of(const void* pointer) { return static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(pointer)); }
void* pointer_at(MPI_Aint address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

struct Piece {
  void* address;
  MPI_Count count;
  MPI_Datatype type;
};

}  // namespace

SegmentPlan plan_segments(std::int64_t count, std::int64_t type_size, std::int64_t segment_bytes) {
  const std::int64_t bytes = count * type_size;
  if (bytes <= segment_bytes || segment_bytes <= 0) return {};
  const std::int64_t wanted = (bytes + segment_bytes - 1) / segment_bytes;
  if (count >= wanted) {
    const std::int64_t per = std::max<std::int64_t>(1, segment_bytes / type_size);
    return {SegmentPlan::Mode::elements, (count + per - 1) / per, per};
  }
  return {SegmentPlan::Mode::packed, wanted, segment_bytes};
}

int run_tree_bcast(const BcastBuffer& buffer, int parent, const std::vector<int>& children, const SegmentPlan& plan,
                   std::int64_t message_bytes, MPI_Comm shadow, ScratchBuffer& scratch) {
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  int rc = PMPI_Type_get_extent_c(buffer.type, &lb, &extent);
  if (rc != MPI_SUCCESS) return rc;

  std::byte* packed = nullptr;
  if (plan.mode == SegmentPlan::Mode::packed) {
    packed = scratch.get(static_cast<std::size_t>(message_bytes), buffer.base);
    if (packed == nullptr) return MPI_ERR_NO_MEM;
    if (parent < 0) {
      MPI_Count position = 0;
      rc = PMPI_Pack_c(buffer.base, buffer.count, buffer.type, packed, message_bytes, &position, shadow);
      if (rc != MPI_SUCCESS) return rc;
    }
  }
  auto piece = [&](std::int64_t s) -> Piece {
    switch (plan.mode) {
      case SegmentPlan::Mode::whole: return {buffer.base, buffer.count, buffer.type};
      case SegmentPlan::Mode::elements: {
        const std::int64_t first = s * plan.per_segment;
        return {pointer_at(PMPI_Aint_add(address_of(buffer.base), first * extent)),
                std::min(plan.per_segment, buffer.count - first), buffer.type};
      }
      case SegmentPlan::Mode::packed: {
        const std::int64_t first = s * plan.per_segment;
        return {packed + first, std::min(plan.per_segment, message_bytes - first), MPI_PACKED};
      }
    }
    return {};
  };

  std::deque<MPI_Request> receives;
  std::deque<MPI_Request> sends;
  std::int64_t posted = 0;
  auto post_receives = [&] {
    while (parent >= 0 && rc == MPI_SUCCESS && posted < plan.segments &&
           static_cast<std::int64_t>(receives.size()) < kSegmentsInFlight) {
      const Piece p = piece(posted++);
      receives.push_back(MPI_REQUEST_NULL);
      rc = PMPI_Irecv_c(p.address, p.count, p.type, parent, tags::kBcastSegment, shadow, &receives.back());
    }
  };
  const std::size_t send_limit = static_cast<std::size_t>(kSegmentsInFlight) * std::max<std::size_t>(1, children.size());

  post_receives();
  for (std::int64_t s = 0; s < plan.segments && rc == MPI_SUCCESS; ++s) {
    if (parent >= 0) {
      rc = PMPI_Wait(&receives.front(), MPI_STATUS_IGNORE);
      receives.pop_front();
      post_receives();
    }
    const Piece p = piece(s);
    for (int child : children) {
      if (rc != MPI_SUCCESS) break;
      sends.push_back(MPI_REQUEST_NULL);
      rc = PMPI_Isend_c(p.address, p.count, p.type, child, tags::kBcastSegment, shadow, &sends.back());
    }
    while (rc == MPI_SUCCESS && sends.size() > send_limit) {
      rc = PMPI_Wait(&sends.front(), MPI_STATUS_IGNORE);
      sends.pop_front();
    }
  }
  // Whatever happened, posted operations still use the buffers: finish them.
  // After an error the parent may never send, so receives are cancelled.
  if (rc != MPI_SUCCESS) {
    for (MPI_Request& request : receives) PMPI_Cancel(&request);
  }
  for (std::deque<MPI_Request>* requests : {&receives, &sends}) {
    for (MPI_Request& request : *requests) {
      const int wait_rc = PMPI_Wait(&request, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = wait_rc;
    }
  }
  if (rc == MPI_SUCCESS && packed != nullptr && parent >= 0) {
    MPI_Count position = 0;
    rc = PMPI_Unpack_c(packed, message_bytes, &position, buffer.base, buffer.count, buffer.type, shadow);
  }
  return rc;
}

}  // namespace shim::coll
