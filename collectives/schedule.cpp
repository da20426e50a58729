#include "collectives/schedule.hpp"

namespace shim::coll {

void append_run(std::vector<Run>& runs, Run run) {
  if (run.blocks == 0) return;
  if (!runs.empty()) {
    Run& last = runs.back();
    if (last.buffer == run.buffer && last.first + last.blocks == run.first) {
      last.blocks += run.blocks;
      return;
    }
  }
  runs.push_back(run);
}

std::int64_t total_blocks(const std::vector<Run>& runs) {
  std::int64_t blocks = 0;
  for (const Run& run : runs) blocks += run.blocks;
  return blocks;
}

namespace {

struct SideShape {
  bool valid = false;
  bool uniform = false;
  Buffer buffer = Buffer::stage;
};

SideShape side_shape(const std::vector<Transfer>& transfers) {
  SideShape shape;
  if (transfers.empty()) return shape;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    if (transfers[i].peer != static_cast<int>(i) || transfers[i].runs.size() != 1) return shape;
  }
  const Run& first = transfers.front().runs.front();
  shape.buffer = first.buffer;
  shape.uniform = true;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const Run& run = transfers[i].runs.front();
    if (run.buffer != shape.buffer) return shape;
    const auto index = static_cast<std::int64_t>(i);
    shape.uniform = shape.uniform && run.blocks == first.blocks && run.first == first.first + index * first.blocks;
  }
  shape.valid = true;
  return shape;
}

}  // namespace

RailCallShape rail_call_shape(const Phase& phase) {
  RailCallShape shape;
  if (phase.kind != PhaseKind::rail_alltoall || phase.sends.size() != phase.recvs.size()) return shape;
  const SideShape send = side_shape(phase.sends);
  const SideShape recv = side_shape(phase.recvs);
  shape.valid = send.valid && recv.valid;
  shape.uniform = shape.valid && send.uniform && recv.uniform &&
                  phase.sends.front().runs.front().blocks == phase.recvs.front().runs.front().blocks;
  shape.send_buffer = send.buffer;
  shape.recv_buffer = recv.buffer;
  return shape;
}

}  // namespace shim::coll
