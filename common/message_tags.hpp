// The message tags of shim's protocols, in one place, so that two protocols
// sharing a communicator never match each other's messages.
//
// - The hierarchy's shadow communicator (a dup of the user's) carries the
//   alltoall executor's phases and the broadcast pipeline's segments.
// - The server communicator (a dup of MPI_COMM_WORLD) carries owner-computes
//   requests to the node servers, forwards between servers, their replies
//   and credits.
// - shim-probe measures on MPI_COMM_WORLD with nothing of shim's running.
#pragma once

namespace shim::tags {

// Phase i of an alltoall schedule is tagged kAlltoallPhase + i; schedules
// have a handful of phases, far below the next protocol's tag.
inline constexpr int kAlltoallPhase = 0;
inline constexpr int kBcastSegment = 1000;

inline constexpr int kServerRequest = 7001;
inline constexpr int kServerReply = 7002;
inline constexpr int kServerCredit = 7003;         // first hop to origin: buffers released
inline constexpr int kServerForward = 7004;        // intermediate server to target server
inline constexpr int kServerForwardCredit = 7005;  // target server to intermediate: buffers released

inline constexpr int kProbeTask = 71;
inline constexpr int kProbeReady = 72;
inline constexpr int kProbeGo = 73;
inline constexpr int kProbeReport = 74;
inline constexpr int kProbeData = 75;

}  // namespace shim::tags
