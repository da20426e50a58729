#include "common/stripe_locks.hpp"

#include <sched.h>

#include <atomic>

namespace shim {

static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free,
              "locks shared between processes must be lock-free atomics");

void StripeLocks::lock(int stripe) {
  std::atomic_ref<std::uint32_t> held(word(stripe));
  for (int attempt = 0;; ++attempt) {
    std::uint32_t expected = 0;
    if (held.load(std::memory_order_relaxed) == 0 &&
        held.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;
    if (attempt >= 64) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    else
      __builtin_ia32_pause();
#endif
  }
}

void StripeLocks::unlock(int stripe) {
  std::atomic_ref<std::uint32_t>(word(stripe)).store(0, std::memory_order_release);
}

}  // namespace shim
