#include "collectives/bcast_pipeline.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/address.hpp"
#include "common/message_tags.hpp"
#include "common/mpi_try.hpp"

namespace shim::coll {

namespace {

// Segments a rank keeps in flight from each tree's parent, and per child
// (counted over all its sends, against its widest tree): one on the wire
// and the next behind it, so a link never waits for a rank to post a
// segment. More only queue behind those on a real connection, or, where
// concurrent messages share a link's bandwidth (SimGrid's flow model), make
// every hop deliver them together, one batch per hop. Emulated 3-subnet
// network, against 8: ECO unchanged, two-level 0.84x at 1 MiB and 0.94x at
// 4 MiB (bench/bcast_links.py, 2026-11-27); scale model, ECO-like platform,
// 64 x 8: 0.66x at 64 KiB.
constexpr std::int64_t kSegmentsInFlight = 2;

struct Piece {
  void* address;
  MPI_Count count;
  MPI_Datatype type;
};

std::int64_t widest(const std::vector<RelayRole>& roles) {
  std::size_t most = 1;
  for (const RelayRole& role : roles) most = std::max(most, role.children.size());
  return static_cast<std::int64_t>(most);
}

// This rank's part of one broadcast. Segments arrive from their parents, in
// whatever order their trees deliver them, and each goes on to its children
// as soon as it is here: where segments take different trees, waiting for
// them in order would make every segment wait for the one before it on
// another path.
//
// Sends to one child go in segment order, as the child posts its receives
// from this rank, so each matches its own buffer. A rank keeps at most
// kSegmentsInFlight sends per child of its widest tree in flight, except
// that its lowest segment still to be sent may go while only higher
// segments hold the limit. No deadlock: take the lowest segment s some rank
// r still lacks. r has a receive posted for it (receives are posted in
// segment order), and every lower segment has arrived everywhere, so r's
// parent for s has nothing older in flight to r, holds s, and s is the
// lowest segment it has still to send; its sends of lower segments
// complete, as their receivers have them, so s goes within the limit or
// past higher segments.
class Relay {
 public:
  Relay(const BcastBuffer& buffer, const std::vector<RelayRole>& roles, const SegmentPlan& plan,
        std::int64_t message_bytes, MPI_Comm shadow, MPI_Count extent, std::byte* packed)
      : buffer_(buffer),
        roles_(roles),
        plan_(plan),
        message_bytes_(message_bytes),
        shadow_(shadow),
        extent_(extent),
        packed_(packed),
        send_limit_(kSegmentsInFlight * widest(roles)),
        receive_limit_(kSegmentsInFlight * static_cast<std::int64_t>(roles.size())),
        held_(static_cast<std::size_t>(plan.segments), at_root() ? 1 : 0),
        cut_short_(static_cast<std::size_t>(plan.segments), 0) {
    for (const RelayRole& role : roles_) {
      for (const int child : role.children) {
        if (std::find(children_.begin(), children_.end(), child) == children_.end()) children_.push_back(child);
      }
    }
    place_.assign(roles_.size(), std::vector<std::size_t>(children_.size(), kNotFed));
    for (std::size_t r = 0; r < roles_.size(); ++r) {
      const std::vector<int>& order = roles_[r].children;
      for (std::size_t i = 0; i < order.size(); ++i) {
        const auto c =
            static_cast<std::size_t>(std::find(children_.begin(), children_.end(), order[i]) - children_.begin());
        place_[r][c] = i;
      }
    }
    next_.resize(children_.size());
    for (std::size_t c = 0; c < children_.size(); ++c) next_[c] = next_segment_for(c, 0);
  }

  int run() {
    SHIM_TRY(post_receives());
    SHIM_TRY(send_what_can_go());
    while (true) {
      int index = MPI_UNDEFINED;
      MPI_Status status;
      const int rc = PMPI_Waitany(static_cast<int>(requests_.size()), requests_.data(), &index, &status);
      if (index == MPI_UNDEFINED) return rc == MPI_SUCCESS ? mismatch_ : rc;  // nothing left in flight
      const Operation done = operations_[static_cast<std::size_t>(index)];
      free_.push_back(static_cast<std::size_t>(index));
      if (done.child < 0) {
        SHIM_TRY(check_length(done.segment, status, rc));
        held_[static_cast<std::size_t>(done.segment)] = 1;
        --receives_posted_;
        SHIM_TRY(post_receives());
      } else {
        SHIM_TRY(rc);
        --sends_posted_;
      }
      SHIM_TRY(send_what_can_go());
    }
  }

  // Whatever happened, posted operations still use the buffers: finish
  // them. After an error a parent may never send, so receives are cancelled
  // (a request that completed meanwhile cannot be cancelled, and the wait
  // below reports what became of it).
  int finish(int rc) {
    if (rc != MPI_SUCCESS) {
      for (std::size_t i = 0; i < requests_.size(); ++i) {
        if (requests_[i] != MPI_REQUEST_NULL && operations_[i].child < 0) static_cast<void>(PMPI_Cancel(&requests_[i]));
      }
    }
    for (MPI_Request& request : requests_) {
      const int wait_rc = PMPI_Wait(&request, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = wait_rc;
    }
    return rc;
  }

 private:
  struct Operation {
    std::int64_t segment = 0;
    int child = -1;  // index into children_; -1: a receive
  };

  static constexpr std::size_t kNotFed = SIZE_MAX;

  std::size_t tree_of(std::int64_t s) const { return static_cast<std::size_t>(s) % roles_.size(); }
  const RelayRole& role(std::int64_t s) const { return roles_[tree_of(s)]; }
  bool at_root() const { return roles_.front().parent < 0; }

  // Where child c comes in segment s's send order; kNotFed when s's tree
  // does not make it this rank's child.
  std::size_t place(std::int64_t s, std::size_t c) const { return place_[tree_of(s)][c]; }

  // The first segment from `from` on that child c receives from this rank;
  // plan_.segments when there is none. Trees repeat every roles_.size().
  std::int64_t next_segment_for(std::size_t c, std::int64_t from) const {
    const auto period = static_cast<std::int64_t>(roles_.size());
    for (std::int64_t s = from; s < plan_.segments && s < from + period; ++s) {
      if (place(s, c) != kNotFed) return s;
    }
    return plan_.segments;
  }

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

  MPI_Request* slot_for(Operation operation) {
    std::size_t index = requests_.size();
    if (free_.empty()) {
      requests_.push_back(MPI_REQUEST_NULL);
      operations_.push_back(operation);
    } else {
      index = free_.back();
      free_.pop_back();
      operations_[index] = operation;
    }
    return &requests_[index];
  }

  // Ranks that pass counts of different lengths (which MPI makes
  // erroneous) get a segment longer than their own count says
  // (MPI_ERR_TRUNCATE from the receive, `rc`) or shorter (MPI_ERR_OTHER),
  // as from MPICH. Such a segment goes on empty, so that every rank below
  // gets MPI_ERR_OTHER in turn, as MPICH reports it there, instead of
  // waiting for a segment that never comes. Any other error of the receive
  // ends the broadcast.
  int check_length(std::int64_t s, const MPI_Status& status, int rc) {
    int error_class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) SHIM_TRY(PMPI_Error_class(rc, &error_class));
    if (error_class != MPI_SUCCESS && error_class != MPI_ERR_TRUNCATE) return rc;
    MPI_Count got = 0;
    if (rc == MPI_SUCCESS) SHIM_TRY(PMPI_Get_count_c(&status, piece(s).type, &got));
    if (rc != MPI_SUCCESS || got != piece(s).count) {
      cut_short_[static_cast<std::size_t>(s)] = 1;
      if (mismatch_ == MPI_SUCCESS) mismatch_ = rc != MPI_SUCCESS ? rc : MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
  }

  int post_receives() {
    while (!at_root() && receives_next_ < plan_.segments && receives_posted_ < receive_limit_) {
      const std::int64_t s = receives_next_++;
      const Piece p = piece(s);
      ++receives_posted_;
      SHIM_TRY(
          PMPI_Irecv_c(p.address, p.count, p.type, role(s).parent, tags::kBcastSegment, shadow_, slot_for({s, -1})));
    }
    return MPI_SUCCESS;
  }

  // The send to go next: the lowest segment held and due to a child, to the
  // first such child in its tree's order (the slow links first), within the
  // limit; children_.size() when none may go.
  std::size_t next_send() const {
    std::int64_t lowest_due = plan_.segments;
    for (const std::int64_t s : next_) lowest_due = std::min(lowest_due, s);
    // Beyond the limit only while no lower segment's send is in flight:
    // those complete by themselves (their receivers have them), freeing
    // the limit. Without this a root, which holds every segment, would
    // post all of them at once, and its children would hold the message
    // in MPI's unexpected queue.
    if (sends_posted_ >= send_limit_ && lowest_send_in_flight() < lowest_due) return children_.size();
    std::size_t best = children_.size();
    std::pair<std::int64_t, std::size_t> best_key{plan_.segments, children_.size()};
    for (std::size_t c = 0; c < children_.size(); ++c) {
      const std::int64_t s = next_[c];
      if (s >= plan_.segments || held_[static_cast<std::size_t>(s)] == 0) continue;
      if (sends_posted_ >= send_limit_ && s != lowest_due) continue;
      const std::pair<std::int64_t, std::size_t> key{s, place(s, c)};
      if (key < best_key) {
        best = c;
        best_key = key;
      }
    }
    return best;
  }

  std::int64_t lowest_send_in_flight() const {
    std::int64_t lowest = plan_.segments;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] != MPI_REQUEST_NULL && operations_[i].child >= 0) {
        lowest = std::min(lowest, operations_[i].segment);
      }
    }
    return lowest;
  }

  int send_what_can_go() {
    for (std::size_t c = next_send(); c < children_.size(); c = next_send()) {
      const std::int64_t s = next_[c];
      next_[c] = next_segment_for(c, s + 1);
      ++sends_posted_;
      const Piece p = piece(s);
      const MPI_Count count = cut_short_[static_cast<std::size_t>(s)] != 0 ? 0 : p.count;
      SHIM_TRY(PMPI_Isend_c(p.address, count, p.type, children_[c], tags::kBcastSegment, shadow_,
                            slot_for({s, static_cast<int>(c)})));
    }
    return MPI_SUCCESS;
  }

  const BcastBuffer& buffer_;
  const std::vector<RelayRole>& roles_;
  const SegmentPlan& plan_;
  std::int64_t message_bytes_;
  MPI_Comm shadow_;
  MPI_Count extent_;
  std::byte* packed_;
  std::int64_t send_limit_;
  std::int64_t receive_limit_;
  std::vector<char> held_;                       // per segment: here, to be sent on
  std::vector<char> cut_short_;                  // per segment: arrived at another length than this rank's count
  int mismatch_ = MPI_SUCCESS;                   // the first such segment's error
  std::vector<int> children_;                    // every tree's children, each once
  std::vector<std::vector<std::size_t>> place_;  // per tree, per child: place in the tree's send order
  std::vector<std::int64_t> next_;               // per child: the next segment it gets from this rank
  std::int64_t sends_posted_ = 0;
  std::int64_t receives_posted_ = 0;
  std::int64_t receives_next_ = 0;
  std::vector<MPI_Request> requests_;  // receives and sends in flight; MPI_REQUEST_NULL in free slots
  std::vector<Operation> operations_;  // what each slot of requests_ holds
  std::vector<std::size_t> free_;
};

}  // namespace

SegmentPlan plan_segments(std::int64_t count, std::int64_t type_size, std::int64_t segment_bytes) {
  const std::int64_t bytes = count * type_size;
  if (bytes <= segment_bytes || segment_bytes <= 0) return {};
  const std::int64_t segments = (bytes + segment_bytes - 1) / segment_bytes;
  if (segment_bytes % type_size == 0) return {SegmentPlan::Mode::elements, segments, segment_bytes / type_size};
  return {SegmentPlan::Mode::packed, segments, segment_bytes};
}

int run_tree_bcast(const BcastBuffer& buffer, const std::vector<RelayRole>& roles, const SegmentPlan& plan,
                   std::int64_t message_bytes, MPI_Comm shadow, ScratchBuffer& scratch) {
  const bool at_root = roles.front().parent < 0;
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  SHIM_TRY(PMPI_Type_get_extent_c(buffer.type, &lb, &extent));
  std::byte* packed = nullptr;
  if (plan.mode == SegmentPlan::Mode::packed) {
    packed = scratch.get(static_cast<std::size_t>(message_bytes), buffer.base);
    if (packed == nullptr) return MPI_ERR_NO_MEM;
    if (at_root) {
      MPI_Count position = 0;
      SHIM_TRY(PMPI_Pack_c(buffer.base, buffer.count, buffer.type, packed, message_bytes, &position, shadow));
    }
  }
  Relay relay(buffer, roles, plan, message_bytes, shadow, extent, packed);
  SHIM_TRY(relay.finish(relay.run()));
  if (packed == nullptr || at_root) return MPI_SUCCESS;
  MPI_Count position = 0;
  return PMPI_Unpack_c(packed, message_bytes, &position, buffer.base, buffer.count, buffer.type, shadow);
}

}  // namespace shim::coll
