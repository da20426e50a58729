// Windows under test: created with MPI_Win_allocate, MPI_Win_allocate_shared
// or MPI_Win_create, with the accumulate path requested through the info key
// "shim_accumulate" (owner, caller, native, auto, or none), and the path shim
// reports for them; which paths a run covers, and how large a window gets.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/accumulate/job.hpp"

namespace shim::test::accumulate {

using PathQuery = int (*)(MPI_Win, char*, int);

// shim_win_accumulate_path() is looked up at run time, so this program also
// runs (all windows native) against a libshim that does not have it.
PathQuery path_query();

enum class Creation { Allocate, AllocateShared, Create };
const char* creation_name(Creation c);

struct Window {
  const Comm* c = nullptr;
  Creation how = Creation::Allocate;
  std::string path;      // requested through the info key, "" for none
  std::string reported;  // by shim_win_accumulate_path, "" if unknown
  MPI_Win win = MPI_WIN_NULL;
  unsigned char* base = nullptr;
  void* created_memory = nullptr;
  std::vector<MPI_Aint> sizes;  // of each rank
  std::vector<int> disp_units;  // of each rank
  std::string label;

  MPI_Aint my_size() const { return sizes[static_cast<std::size_t>(c->rank)]; }
};

// Collective over c. Checks the path shim reports against the one asked for
// (rank 0 of c prints it, once per kind of window), and sets
// MPI_ERRORS_RETURN on the window.
Window open_window(const Comm& c, Creation how, const std::string& path, std::vector<MPI_Aint> sizes,
                   std::vector<int> disp_units, const std::string& what);
void close_window(Window& w);

// MPICH's own MPI_Win_allocate is right only for sizes that are multiples of
// the page size (see odd_sizes() in window_kinds.cpp); windows that may be MPICH's own get
// such sizes everywhere but in that test.
bool maybe_native(const std::string& path);
MPI_Aint window_bytes(MPI_Aint needed, const std::string& path, Creation how);

// The same disp_unit on every rank of c.
std::vector<int> uniform(const Comm& c, int du);

// ACCUMULATE_MATRIX_PATHS=owner,native (say) runs only those paths.
const std::vector<std::string>& paths();
int path_index(const std::string& p);

// caller-computes costs a lock, a get, a put and an unlock per call, and
// on an oversubscribed machine each of those waits for a time slice: it
// runs the sparse plans and fewer repetitions.
bool light(const std::string& path);

}  // namespace shim::test::accumulate
