#include "rma/server_counters.hpp"

#include <pthread.h>

namespace shim::rma {

namespace {

std::int64_t steady_ns(std::chrono::steady_clock::time_point when) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(when.time_since_epoch()).count();
}

// Written by the server thread only: a load and a store suffice.
void add(std::atomic<std::uint64_t>& counter, std::uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

}  // namespace

void ServerCounters::start() {
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  // Without the thread's clock the report shows no idle CPU, nothing else.
  if (pthread_getcpuclockid(pthread_self(), &clock) != 0) clock = CLOCK_THREAD_CPUTIME_ID;
  cpu_clock_.store(clock);
  start_ns_.store(steady_ns(std::chrono::steady_clock::now()));
  started_.store(true, std::memory_order_release);
}

void ServerCounters::applied(std::int64_t data_bytes) {
  add(requests_, 1);
  add(bytes_, static_cast<std::uint64_t>(data_bytes));
}

ServerCounters::Reading ServerCounters::read() const {
  Reading reading;
  reading.started = started_.load(std::memory_order_acquire);
  if (!reading.started) return reading;
  reading.requests = requests_.load(std::memory_order_relaxed);
  reading.bytes = bytes_.load(std::memory_order_relaxed);
  reading.wall_ns = static_cast<std::uint64_t>(steady_ns(std::chrono::steady_clock::now()) - start_ns_.load());
  const clockid_t clock = cpu_clock_.load();
  timespec cpu{};
  // CLOCK_THREAD_CPUTIME_ID here would be the reader's own: no reading then.
  if (clock != CLOCK_THREAD_CPUTIME_ID && clock_gettime(clock, &cpu) == 0) {
    reading.cpu_ns = static_cast<std::uint64_t>(cpu.tv_sec) * 1000000000u + static_cast<std::uint64_t>(cpu.tv_nsec);
  }
  return reading;
}

ServerCounters& server_counters() {
  static ServerCounters counters;
  return counters;
}

}  // namespace shim::rma
