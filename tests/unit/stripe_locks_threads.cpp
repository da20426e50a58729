// Stripe locks under concurrent threads: the read-modify-writes they guard
// must add up exactly. A program of its own, without Catch2, so the
// ThreadSanitizer build in tools/check compiles only this and the locks.
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/stripe_locks.hpp"

int main() {
  using shim::StripeLocks;
  alignas(64) static std::uint32_t words[StripeLocks::kBytes / sizeof(std::uint32_t)] = {};
  std::int64_t counters[2] = {0, 0};
  constexpr int kThreads = 4, kIncrements = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      StripeLocks locks(words);
      for (int i = 0; i < kIncrements; ++i) {
        const int stripe = i % 2;
        locks.lock(stripe);
        counters[stripe] += 1;
        locks.unlock(stripe);
      }
    });
  for (auto& thread : threads) thread.join();
  const std::int64_t want = std::int64_t{kThreads} * kIncrements / 2;
  if (counters[0] != want || counters[1] != want) {
    std::fprintf(stderr, "stripe locks: counters %lld and %lld, expected %lld each\n",
                 static_cast<long long>(counters[0]), static_cast<long long>(counters[1]),
                 static_cast<long long>(want));
    return 1;
  }
  std::printf("stripe locks: %d threads x %d locked increments on 2 stripes: exact\n", kThreads, kIncrements);
  return 0;
}
