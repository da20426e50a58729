#include "fault_injection.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace fault {

namespace {

thread_local long t_fail_at = 0;
thread_local long t_calls = 0;
thread_local bool t_fired = false;
thread_local const char* t_fired_in = "";
std::atomic<long> g_live{0};

// MPICH's definition of `name`, found past this executable's.
template <typename Function>
Function real(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "fault injection: %s not found in MPI\n", name);
    std::abort();
  }
  return reinterpret_cast<Function>(symbol);
}

bool fail_now(const char* name) {
  if (t_fail_at == 0) return false;
  if (++t_calls != t_fail_at) return false;
  t_fired = true;
  t_fired_in = name;
  return true;
}

int counted(int rc, long change) {
  if (rc == MPI_SUCCESS) g_live += change;
  return rc;
}

}  // namespace

void arm(long fail_at) {
  t_fail_at = fail_at;
  t_calls = 0;
  t_fired = false;
}

bool fired() { return t_fired; }
const char* fired_in() { return t_fired_in; }
long live_handles() { return g_live.load(); }

}  // namespace fault

// One wrapper per intercepted function: `Creates` is +1 for calls that make
// a handle, -1 for frees (never failed), 0 for the rest.
#define SHIM_FAULT_WRAP(Creates, Name, Params, Args)                  \
  extern "C" int Name Params {                                        \
    static const auto forward = fault::real<int(*) Params>(#Name);    \
    if (Creates >= 0 && fault::fail_now(#Name)) return MPI_ERR_OTHER; \
    return fault::counted(forward Args, Creates);                     \
  }

SHIM_FAULT_WRAP(1, PMPI_Comm_dup, (MPI_Comm comm, MPI_Comm* out), (comm, out))
SHIM_FAULT_WRAP(1, PMPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* out), (comm, color, key, out))
SHIM_FAULT_WRAP(1, PMPI_Comm_split_type, (MPI_Comm comm, int kind, int key, MPI_Info info, MPI_Comm* out),
                (comm, kind, key, info, out))
SHIM_FAULT_WRAP(1, PMPI_Comm_group, (MPI_Comm comm, MPI_Group* out), (comm, out))
SHIM_FAULT_WRAP(1, PMPI_Win_allocate_shared,
                (MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, void* base, MPI_Win* out),
                (size, unit, info, comm, base, out))
SHIM_FAULT_WRAP(1, PMPI_Win_create, (void* base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm comm, MPI_Win* out),
                (base, size, unit, info, comm, out))
SHIM_FAULT_WRAP(1, PMPI_Info_create, (MPI_Info * out), (out))
SHIM_FAULT_WRAP(1, PMPI_Type_dup, (MPI_Datatype type, MPI_Datatype* out), (type, out))
SHIM_FAULT_WRAP(-1, PMPI_Comm_free, (MPI_Comm * comm), (comm))
SHIM_FAULT_WRAP(-1, PMPI_Group_free, (MPI_Group * group), (group))
SHIM_FAULT_WRAP(-1, PMPI_Win_free, (MPI_Win * win), (win))
SHIM_FAULT_WRAP(-1, PMPI_Info_free, (MPI_Info * info), (info))
SHIM_FAULT_WRAP(-1, PMPI_Type_free, (MPI_Datatype * type), (type))
SHIM_FAULT_WRAP(0, PMPI_Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler handler), (comm, handler))
SHIM_FAULT_WRAP(0, PMPI_Win_set_errhandler, (MPI_Win win, MPI_Errhandler handler), (win, handler))
SHIM_FAULT_WRAP(0, PMPI_Group_translate_ranks, (MPI_Group a, int n, const int ranks[], MPI_Group b, int out[]),
                (a, n, ranks, b, out))
SHIM_FAULT_WRAP(0, PMPI_Win_lock_all, (int assert_flags, MPI_Win win), (assert_flags, win))
SHIM_FAULT_WRAP(0, PMPI_Win_shared_query, (MPI_Win win, int rank, MPI_Aint* size, int* unit, void* base),
                (win, rank, size, unit, base))
SHIM_FAULT_WRAP(0, PMPI_Win_sync, (MPI_Win win), (win))
SHIM_FAULT_WRAP(0, PMPI_Win_set_attr, (MPI_Win win, int keyval, void* value), (win, keyval, value))
SHIM_FAULT_WRAP(0, PMPI_Info_set, (MPI_Info info, const char* key, const char* value), (info, key, value))
SHIM_FAULT_WRAP(0, PMPI_Barrier, (MPI_Comm comm), (comm))
SHIM_FAULT_WRAP(0, PMPI_Allgather,
                (const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                 MPI_Datatype recv_type, MPI_Comm comm),
                (send, send_count, send_type, recv, recv_count, recv_type, comm))
SHIM_FAULT_WRAP(0, PMPI_Allreduce,
                (const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
                (send, recv, count, type, op, comm))
SHIM_FAULT_WRAP(0, PMPI_Isend_c,
                (const void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                 MPI_Request* request),
                (buffer, count, type, peer, tag, comm, request))
SHIM_FAULT_WRAP(0, PMPI_Irecv_c,
                (void* buffer, MPI_Count count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                 MPI_Request* request),
                (buffer, count, type, peer, tag, comm, request))
