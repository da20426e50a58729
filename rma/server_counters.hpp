// What this process's node server did, for the SHIM_STATS report: requests
// applied and their bytes, and the CPU the server thread used, so the report
// can show what it cost while idle (its busy time is the server's own
// counter, ServerPoolCounters). The server thread writes; any thread reads.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace shim::rma {

class ServerCounters {
 public:
  // On the server thread, as it starts.
  void start();
  // On the server thread: one request applied (flushes are not requests).
  void applied(std::int64_t data_bytes);

  struct Reading {
    bool started = false;
    std::uint64_t requests = 0;
    std::uint64_t bytes = 0;
    std::uint64_t wall_ns = 0;  // since start()
    std::uint64_t cpu_ns = 0;   // the server thread's CPU time since it began
  };
  // While the server thread runs (its CPU clock ends with it).
  Reading read() const;

 private:
  std::atomic<bool> started_{false};
  std::atomic<std::int64_t> start_ns_{0};  // steady clock
  std::atomic<clockid_t> cpu_clock_{CLOCK_THREAD_CPUTIME_ID};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> bytes_{0};
};

// This process's: only the process that hosts its node's server counts.
ServerCounters& server_counters();

}  // namespace shim::rma
