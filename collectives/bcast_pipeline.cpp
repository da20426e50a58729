#include "collectives/bcast_pipeline.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>

#include "common/message_tags.hpp"
#include "common/mpi_try.hpp"

namespace shim::coll {

namespace {

// Segments a rank keeps in flight from its parent, and per child: one on
// the wire and the next behind it, so a link never waits for a rank to post
// a segment. More only queue behind those on a real connection, or, where
// concurrent messages share a link's bandwidth (SimGrid's flow model), make
// every hop deliver them together, one batch per hop. Emulated 3-subnet
// network, against 8: ECO unchanged, two-level 0.84x at 1 MiB and 0.94x at
// 4 MiB (bench/bcast_links.py, 2026-11-27); scale model, ECO-like platform,
// 64 x 8: 0.66x at 64 KiB.
constexpr std::int64_t kSegmentsInFlight = 2;

MPI_Aint address_of(const void* pointer) { return static_cast<MPI_Aint>(reinterpret_cast<std::uintptr_t>(pointer)); }
void* pointer_at(MPI_Aint address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

struct Piece {
  void* address;
  MPI_Count count;
  MPI_Datatype type;
};

// This rank's part of one broadcast: segments arrive from the parent and go
// on to the children, with up to kSegmentsInFlight in flight from the parent
// and per child.
class Relay {
 public:
  Relay(const BcastBuffer& buffer, int parent, const std::vector<int>& children, const SegmentPlan& plan,
        std::int64_t message_bytes, MPI_Comm shadow, MPI_Count extent, std::byte* packed)
      : buffer_(buffer),
        parent_(parent),
        children_(children),
        plan_(plan),
        message_bytes_(message_bytes),
        shadow_(shadow),
        extent_(extent),
        packed_(packed),
        send_limit_(static_cast<std::size_t>(kSegmentsInFlight) * std::max<std::size_t>(1, children.size())) {}

  int run() {
    SHIM_TRY(post_receives());
    for (std::int64_t s = 0; s < plan_.segments; ++s) SHIM_TRY(relay(s));
    return MPI_SUCCESS;
  }

  // Whatever happened, posted operations still use the buffers: finish
  // them. After an error the parent may never send, so receives are
  // cancelled (a request that completed meanwhile cannot be cancelled, and
  // the wait below reports what became of it).
  int finish(int rc) {
    if (rc != MPI_SUCCESS) {
      for (MPI_Request& request : receives_) {
        if (request != MPI_REQUEST_NULL) static_cast<void>(PMPI_Cancel(&request));
      }
    }
    for (std::deque<MPI_Request>* requests : {&receives_, &sends_}) {
      for (MPI_Request& request : *requests) {
        const int wait_rc = PMPI_Wait(&request, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS) rc = wait_rc;
      }
    }
    return rc;
  }

 private:
  Piece piece(std::int64_t s) const {
    const std::int64_t first = s * plan_.per_segment;
    switch (plan_.mode) {
      case SegmentPlan::Mode::whole:
        return {buffer_.base, buffer_.count, buffer_.type};
      case SegmentPlan::Mode::elements:
        return {pointer_at(PMPI_Aint_add(address_of(buffer_.base), first * extent_)),
                std::min(plan_.per_segment, buffer_.count - first), buffer_.type};
      case SegmentPlan::Mode::packed:
        return {packed_ + first, std::min(plan_.per_segment, message_bytes_ - first), MPI_PACKED};
    }
    return {};
  }

  int post_receives() {
    while (parent_ >= 0 && posted_ < plan_.segments &&
           static_cast<std::int64_t>(receives_.size()) < kSegmentsInFlight) {
      const Piece p = piece(posted_++);
      receives_.push_back(MPI_REQUEST_NULL);
      SHIM_TRY(PMPI_Irecv_c(p.address, p.count, p.type, parent_, tags::kBcastSegment, shadow_, &receives_.back()));
    }
    return MPI_SUCCESS;
  }

  int relay(std::int64_t s) {
    if (parent_ >= 0) {
      const int rc = PMPI_Wait(&receives_.front(), MPI_STATUS_IGNORE);
      receives_.pop_front();
      SHIM_TRY(rc);
      SHIM_TRY(post_receives());
    }
    const Piece p = piece(s);
    for (const int child : children_) {
      sends_.push_back(MPI_REQUEST_NULL);
      SHIM_TRY(PMPI_Isend_c(p.address, p.count, p.type, child, tags::kBcastSegment, shadow_, &sends_.back()));
    }
    while (sends_.size() > send_limit_) {
      const int rc = PMPI_Wait(&sends_.front(), MPI_STATUS_IGNORE);
      sends_.pop_front();
      SHIM_TRY(rc);
    }
    return MPI_SUCCESS;
  }

  const BcastBuffer& buffer_;
  int parent_;
  const std::vector<int>& children_;
  const SegmentPlan& plan_;
  std::int64_t message_bytes_;
  MPI_Comm shadow_;
  MPI_Count extent_;
  std::byte* packed_;
  std::size_t send_limit_;
  std::deque<MPI_Request> receives_;
  std::deque<MPI_Request> sends_;
  std::int64_t posted_ = 0;
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
  SHIM_TRY(PMPI_Type_get_extent_c(buffer.type, &lb, &extent));
  std::byte* packed = nullptr;
  if (plan.mode == SegmentPlan::Mode::packed) {
    packed = scratch.get(static_cast<std::size_t>(message_bytes), buffer.base);
    if (packed == nullptr) return MPI_ERR_NO_MEM;
    if (parent < 0) {
      MPI_Count position = 0;
      SHIM_TRY(PMPI_Pack_c(buffer.base, buffer.count, buffer.type, packed, message_bytes, &position, shadow));
    }
  }
  Relay relay(buffer, parent, children, plan, message_bytes, shadow, extent, packed);
  SHIM_TRY(relay.finish(relay.run()));
  if (packed == nullptr || parent < 0) return MPI_SUCCESS;
  MPI_Count position = 0;
  return PMPI_Unpack_c(packed, message_bytes, &position, buffer.base, buffer.count, buffer.type, shadow);
}

}  // namespace shim::coll
