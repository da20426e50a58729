// Copies between this process and another process's memory on the same node
// through Linux cross-memory attach (process_vm_readv / process_vm_writev),
// for windows over memory the caller allocated (MPI_Win_create), which no
// other process can map. The kernel allows it where ptrace would be allowed:
// the same user, and not forbidden by Yama's ptrace_scope or a seccomp
// profile, so shim asks the kernel before it relies on it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>

#include "rma/datatype_layout.hpp"

namespace shim::rma {

// A piece of another process's memory.
struct ProcessMemory {
  pid_t pid = 0;
  std::uintptr_t base = 0;
  std::int64_t bytes = 0;
};

// Gathers the bytes `runs` name (offsets from memory.base + offset) into
// `packed`, in run order, or scatters `packed` back to them. 0 or the errno
// of the failed call (EPERM/ESRCH: no access; EFAULT: an address the
// process does not have mapped).
int read_runs(const ProcessMemory& memory, std::int64_t offset, std::span<const ByteRun> runs, unsigned char* packed);
int write_runs(const ProcessMemory& memory, std::int64_t offset, std::span<const ByteRun> runs,
               const unsigned char* packed);

// Whether this process may read `bytes` at `address` in process `pid`.
bool can_read(pid_t pid, std::uintptr_t address, std::size_t bytes);

}  // namespace shim::rma
