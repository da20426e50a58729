#include "rma/cross_memory.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <vector>

namespace shim::rma {

namespace {

// The kernel takes at most IOV_MAX pieces per call.
constexpr std::size_t kPiecesPerCall = IOV_MAX;

using Transfer = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

// One call per batch of runs. The kernel stops short only where it cannot
// reach a page, so a short transfer is a failure.
int transfer(Transfer call, const ProcessMemory& memory, std::int64_t offset, std::span<const ByteRun> runs,
             unsigned char* packed) {
  std::vector<iovec> remote;
  remote.reserve(std::min(runs.size(), kPiecesPerCall));
  while (!runs.empty()) {
    const std::span<const ByteRun> batch = runs.first(std::min(runs.size(), kPiecesPerCall));
    remote.clear();
    std::size_t bytes = 0;
    for (const ByteRun& run : batch) {
      remote.push_back({reinterpret_cast<void*>(memory.base + static_cast<std::uintptr_t>(offset + run.offset)),
                        static_cast<std::size_t>(run.bytes)});
      bytes += static_cast<std::size_t>(run.bytes);
    }
    iovec local{packed, bytes};
    const ssize_t moved = call(memory.pid, &local, 1, remote.data(), remote.size(), 0);
    if (moved < 0) return errno;
    if (static_cast<std::size_t>(moved) != bytes) return EFAULT;
    packed += bytes;
    runs = runs.subspan(batch.size());
  }
  return 0;
}

ssize_t write_call(pid_t pid, const iovec* local, unsigned long local_count, const iovec* remote,
                   unsigned long remote_count, unsigned long flags) {
  return process_vm_writev(pid, local, local_count, remote, remote_count, flags);
}

ssize_t read_call(pid_t pid, const iovec* local, unsigned long local_count, const iovec* remote,
                  unsigned long remote_count, unsigned long flags) {
  return process_vm_readv(pid, local, local_count, remote, remote_count, flags);
}

}  // namespace

int read_runs(const ProcessMemory& memory, std::int64_t offset, std::span<const ByteRun> runs, unsigned char* packed) {
  return transfer(read_call, memory, offset, runs, packed);
}

int write_runs(const ProcessMemory& memory, std::int64_t offset, std::span<const ByteRun> runs,
               const unsigned char* packed) {
  // The kernel reads the local side only; transfer() is shared with reads.
  return transfer(write_call, memory, offset, runs, const_cast<unsigned char*>(packed));
}

bool can_read(pid_t pid, std::uintptr_t address, std::size_t bytes) {
  std::vector<unsigned char> copy(bytes);
  iovec local{copy.data(), bytes};
  iovec remote{reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
}

}  // namespace shim::rma
