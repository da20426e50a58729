#include "tests/support/memory_executor.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <utility>

#include "collectives/alltoall_schedules.hpp"

namespace shim::test {

namespace {

using coll::Buffer;
using coll::Phase;
using coll::PhaseKind;
using coll::Run;
using coll::Transfer;

constexpr std::int64_t kEmpty = -1;

struct RankMemory {
  std::vector<std::int64_t> send, recv, stage;
  bool in_place = false;
  std::vector<std::int64_t>& operator[](Buffer buffer) {
    if (buffer == Buffer::send) return in_place ? recv : send;
    return buffer == Buffer::recv ? recv : stage;
  }
};

using Slot = std::pair<Buffer, std::int64_t>;

struct Message {
  int from, to;
  const Transfer* send;
  const Transfer* recv;
};

class Simulator {
 public:
  Simulator(const topo::Layout& layout, std::vector<coll::Schedule> schedules, std::vector<RankMemory> memory)
      : layout_(layout), schedules_(std::move(schedules)), memory_(std::move(memory)) {
    result_.traffic.resize(layout.size());
  }

  SimulationResult run() {
    const std::size_t phases = schedules_.empty() ? 0 : schedules_.front().phases.size();
    for (const auto& schedule : schedules_) {
      if (schedule.phases.size() != phases) return fail("ranks disagree on the number of phases");
    }
    for (std::size_t phase = 0; phase < phases && result_.errors.empty(); ++phase) run_phase(phase);
    return std::move(result_);
  }

  // After run(): every rank's memory, for the caller to check.
  const std::vector<RankMemory>& memory() const { return memory_; }

 private:
  SimulationResult fail(std::string error) {
    result_.errors.push_back(std::move(error));
    return std::move(result_);
  }

  void error(std::size_t phase, int rank, const std::string& what) {
    result_.errors.push_back("phase " + std::to_string(phase) + ", rank " + std::to_string(rank) + ": " + what);
  }

  const Phase& phase_of(int rank, std::size_t phase) const { return schedules_[rank].phases[phase]; }

  // Pairs each send with its receive. Exchange peers are communicator ranks;
  // rail peers are rail ranks, translated through the layout.
  std::vector<Message> match(std::size_t phase) {
    std::vector<Message> messages;
    std::set<std::pair<int, const Transfer*>> matched_recvs;
    for (int rank = 0; rank < layout_.size(); ++rank) {
      const Phase& mine = phase_of(rank, phase);
      const bool rail = mine.kind == PhaseKind::rail_alltoall;
      if (rail && !mine.sends.empty()) {
        ++result_.rail_calls;
        if (coll::rail_call_shape(mine).uniform) ++result_.uniform_rail_calls;
        if (!coll::rail_call_shape(mine).valid) error(phase, rank, "rail phase is not one run per peer");
      }
      const std::vector<int> rail_ranks = layout_.rail(layout_.local_rank(rank));
      for (const Transfer& send : mine.sends) {
        if (rail && (send.peer < 0 || send.peer >= static_cast<int>(rail_ranks.size()))) {
          error(phase, rank, "rail peer out of range");
          continue;
        }
        const int to = rail ? rail_ranks[send.peer] : send.peer;
        // On a rail communicator, ranks are positions in the rail (it is split in node order).
        const int my_id =
            rail ? static_cast<int>(std::find(rail_ranks.begin(), rail_ranks.end(), rank) - rail_ranks.begin()) : rank;
        const Phase& theirs = phase_of(to, phase);
        if (theirs.kind != mine.kind) {
          error(phase, rank, "peer " + std::to_string(to) + " runs a different kind of phase");
          continue;
        }
        const Transfer* recv = nullptr;
        int candidates = 0;
        for (const Transfer& candidate : theirs.recvs) {
          if (candidate.peer == my_id) {
            recv = &candidate;
            ++candidates;
          }
        }
        if (candidates != 1) {
          error(phase, rank, "send to " + std::to_string(to) + " has " + std::to_string(candidates) + " receives");
          continue;
        }
        if (coll::total_blocks(send.runs) != coll::total_blocks(recv->runs)) {
          error(phase, rank, "send to " + std::to_string(to) + " and its receive differ in size");
          continue;
        }
        matched_recvs.insert({to, recv});
        messages.push_back({rank, to, &send, recv});
      }
    }
    for (int rank = 0; rank < layout_.size(); ++rank) {
      for (const Transfer& recv : phase_of(rank, phase).recvs) {
        if (!matched_recvs.count({rank, &recv})) error(phase, rank, "a receive has no matching send");
      }
    }
    return messages;
  }

  void run_phase(std::size_t phase) {
    const std::vector<Message> messages = match(phase);
    if (!result_.errors.empty()) return;

    // Within a phase everything is concurrent: read all, then write all.
    std::vector<std::set<Slot>> reads(layout_.size()), writes(layout_.size());
    std::vector<std::vector<std::int64_t>> payloads;
    for (const Message& message : messages) {
      std::vector<std::int64_t> payload;
      for (const Run& run : message.send->runs) {
        for (std::int64_t b = run.first; b < run.first + run.blocks; ++b) {
          auto& buffer = memory_[message.from][run.buffer];
          if (b < 0 || b >= static_cast<std::int64_t>(buffer.size())) {
            error(phase, message.from, "reads outside a buffer");
            return;
          }
          if (buffer[b] == kEmpty) error(phase, message.from, "reads a block nobody wrote");
          reads[message.from].insert({run.buffer, b});
          payload.push_back(buffer[b]);
        }
      }
      payloads.push_back(std::move(payload));
      count(message);
    }
    for (std::size_t m = 0; m < messages.size(); ++m) {
      std::size_t next = 0;
      for (const Run& run : messages[m].recv->runs) {
        for (std::int64_t b = run.first; b < run.first + run.blocks; ++b) {
          auto& buffer = memory_[messages[m].to][run.buffer];
          if (b < 0 || b >= static_cast<std::int64_t>(buffer.size())) {
            error(phase, messages[m].to, "writes outside a buffer");
            return;
          }
          if (!writes[messages[m].to].insert({run.buffer, b}).second) {
            error(phase, messages[m].to, "writes a block twice in one phase");
          }
          if (reads[messages[m].to].count({run.buffer, b})) {
            error(phase, messages[m].to, "reads and writes the same block in one phase");
          }
          buffer[b] = payloads[m][next++];
        }
      }
    }
  }

  void count(const Message& message) {
    const std::int64_t blocks = coll::total_blocks(message.send->runs);
    if (message.from == message.to || blocks == 0) return;
    coll::Traffic& traffic = result_.traffic[message.from];
    if (layout_.same_node(message.from, message.to)) {
      ++traffic.intra_messages;
      traffic.intra_blocks += blocks;
    } else {
      ++traffic.inter_messages;
      traffic.inter_blocks += blocks;
    }
  }

  const topo::Layout& layout_;
  std::vector<coll::Schedule> schedules_;
  std::vector<RankMemory> memory_;
  SimulationResult result_;
};

}  // namespace

SimulationResult simulate_alltoall(coll::ScheduleKind kind, const topo::Layout& layout, bool in_place) {
  const int size = layout.size();
  std::vector<coll::Schedule> schedules;
  std::vector<RankMemory> memories;
  for (int rank = 0; rank < size; ++rank) {
    schedules.push_back(coll::build_alltoall_schedule(kind, layout, rank));
    RankMemory memory;
    memory.send.resize(size);
    for (int dest = 0; dest < size; ++dest) memory.send[dest] = std::int64_t{rank} * size + dest;
    // As the runner does for a schedule that is not in-place safe: the
    // send blocks are a copy of the in-place buffer.
    memory.in_place = in_place && schedules.back().in_place_safe;
    memory.recv = in_place ? memory.send : std::vector<std::int64_t>(size, kEmpty);
    memory.stage.assign(schedules.back().stage_blocks, kEmpty);
    memories.push_back(std::move(memory));
  }
  Simulator simulator(layout, std::move(schedules), std::move(memories));
  SimulationResult result = simulator.run();
  if (!result.errors.empty()) return result;
  for (int dest = 0; dest < size; ++dest) {
    for (int source = 0; source < size; ++source) {
      const std::int64_t expected = std::int64_t{source} * size + dest;
      const std::int64_t got = simulator.memory()[dest].recv[source];
      if (got != expected) {
        result.errors.push_back("rank " + std::to_string(dest) + " block from " + std::to_string(source) +
                                ": expected token " + std::to_string(expected) + ", got " + std::to_string(got));
      }
    }
  }
  return result;
}

SimulationResult simulate_stage_bcast(const topo::Layout& layout, int root,
                                      const std::function<coll::Schedule(int rank)>& build) {
  std::vector<coll::Schedule> schedules;
  std::vector<RankMemory> memories;
  for (int rank = 0; rank < layout.size(); ++rank) {
    schedules.push_back(build(rank));
    RankMemory memory;
    memory.stage.assign(schedules.back().stage_blocks, kEmpty);
    if (rank == root) std::iota(memory.stage.begin(), memory.stage.end(), std::int64_t{0});
    memories.push_back(std::move(memory));
  }
  Simulator simulator(layout, std::move(schedules), std::move(memories));
  SimulationResult result = simulator.run();
  if (!result.errors.empty()) return result;
  for (int rank = 0; rank < layout.size(); ++rank) {
    const std::vector<std::int64_t>& stage = simulator.memory()[rank].stage;
    for (std::size_t b = 0; b < stage.size(); ++b) {
      if (stage[b] != static_cast<std::int64_t>(b)) {
        result.errors.push_back("rank " + std::to_string(rank) + " stage block " + std::to_string(b) + ": got token " +
                                std::to_string(stage[b]));
      }
    }
  }
  return result;
}

SimulationResult simulate_alltoall(coll::AlltoallAlgorithm algorithm, const topo::Layout& layout, bool in_place) {
  return simulate_alltoall(coll::ScheduleKind{algorithm, false}, layout, in_place);
}

}  // namespace shim::test
