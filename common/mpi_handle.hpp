// Owners of MPI handles: each handle shim creates has exactly one owner,
// which frees it when it goes, so an early return on an error path releases
// everything acquired before it.
//
// A destructor cannot report MPI's result; where that result matters (a
// window or communicator freed on the normal path), call free() and check
// it. Freeing communicators and windows is collective: on an error path
// every process of the group frees alike, since they failed alike.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <utility>

namespace shim {

template <typename Traits>
class MpiHandle {
 public:
  using Handle = typename Traits::Handle;

  MpiHandle() = default;
  explicit MpiHandle(Handle handle) : handle_(handle) {}
  MpiHandle(const MpiHandle&) = delete;
  MpiHandle& operator=(const MpiHandle&) = delete;
  MpiHandle(MpiHandle&& other) noexcept : handle_(std::exchange(other.handle_, Traits::null())) {}
  MpiHandle& operator=(MpiHandle&& other) noexcept {
    if (this != &other) {
      discard();
      handle_ = std::exchange(other.handle_, Traits::null());
    }
    return *this;
  }
  ~MpiHandle() { discard(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Traits::null(); }
  // Where a PMPI_* call stores a new handle; what was held is freed first.
  Handle* out() {
    discard();
    return &handle_;
  }
  // Gives the handle up without freeing it: someone else frees it now.
  Handle release() { return std::exchange(handle_, Traits::null()); }
  // Frees now and returns MPI's result; the handle is null afterwards.
  int free() {
    if (handle_ == Traits::null()) return MPI_SUCCESS;
    const int rc = Traits::free(&handle_);
    handle_ = Traits::null();
    return rc;
  }

 private:
  void discard() {
    // Nothing to report to from here: the path that matters calls free().
    if (handle_ != Traits::null()) static_cast<void>(free());
  }
  Handle handle_ = Traits::null();
};

struct CommTraits {
  using Handle = MPI_Comm;
  static Handle null() { return MPI_COMM_NULL; }
  static int free(Handle* handle) { return PMPI_Comm_free(handle); }
};
struct WinTraits {
  using Handle = MPI_Win;
  static Handle null() { return MPI_WIN_NULL; }
  static int free(Handle* handle) { return PMPI_Win_free(handle); }
};
struct GroupTraits {
  using Handle = MPI_Group;
  static Handle null() { return MPI_GROUP_NULL; }
  static int free(Handle* handle) { return PMPI_Group_free(handle); }
};
struct InfoTraits {
  using Handle = MPI_Info;
  static Handle null() { return MPI_INFO_NULL; }
  static int free(Handle* handle) { return PMPI_Info_free(handle); }
};
struct TypeTraits {
  using Handle = MPI_Datatype;
  static Handle null() { return MPI_DATATYPE_NULL; }
  static int free(Handle* handle) { return PMPI_Type_free(handle); }
};

using OwnedComm = MpiHandle<CommTraits>;
using OwnedWin = MpiHandle<WinTraits>;
using OwnedGroup = MpiHandle<GroupTraits>;
using OwnedInfo = MpiHandle<InfoTraits>;
using OwnedType = MpiHandle<TypeTraits>;

// Memory from PMPI_Alloc_mem. Freeing memory MPI handed out cannot fail.
struct MpiMemoryFree {
  void operator()(std::byte* memory) const { static_cast<void>(PMPI_Free_mem(memory)); }
};
using OwnedMpiMemory = std::unique_ptr<std::byte[], MpiMemoryFree>;

}  // namespace shim
