// What alltoall_matrix and bcast_matrix both set up: the derived datatypes
// they exchange, the communicators they run on, the job's placement on
// hosts, and an intercommunicator (where shim must leave the call to MPI).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace shim::test {

// Derived datatypes, committed, and freed together by the destructor.
class DerivedTypes {
 public:
  DerivedTypes() = default;
  DerivedTypes(const DerivedTypes&) = delete;
  DerivedTypes& operator=(const DerivedTypes&) = delete;
  ~DerivedTypes();

  // Commits `type` and frees it with the others.
  MPI_Datatype commit(MPI_Datatype type);

  // The shapes both matrices use. Holes between and around elements, a
  // struct of mixed members, a negative lower bound.
  MPI_Datatype strided_ints();     // vector(3,2,4) of int
  MPI_Datatype record();           // struct {int, double, char}, extent of the C++ struct
  MPI_Datatype spaced_int();       // int resized to extent 12
  MPI_Datatype negative_lb_int();  // int resized to lower bound -8, extent 16

 private:
  std::vector<MPI_Datatype> types_;
};

// `count` elements of `type` at `buffer` as one element of a new,
// uncommitted datatype of absolute addresses: the same data, passed as
// MPI_BOTTOM.
MPI_Datatype absolute_elements(const void* buffer, MPI_Count count, MPI_Datatype type);

// Whether `count` elements of `type` are no data at all (shim leaves such
// calls to MPI, uncounted).
bool no_data(MPI_Datatype type, MPI_Count count);

struct NamedComm {
  std::string name;
  MPI_Comm comm;
  // World's duplicate: world's group, so world's schedules; only the state
  // cached on a communicator of its own is new there.
  bool duplicate_of_world = false;
};

// world, a duplicate of world (with_duplicate), world in reverse order, even
// and odd ranks, world without the ranks r % 3 == 1 (MPI_COMM_NULL there),
// and self: every shape of group a hierarchical algorithm must handle.
std::vector<NamedComm> test_communicators(bool with_duplicate);
// Frees the ones test_communicators() created.
void free_test_communicator(NamedComm& named);

// How many processes of MPI_COMM_WORLD share this process's host.
int processes_on_this_host();

// Even world ranks on one side, odd ones on the other; needs two processes.
class EvenOddIntercomm {
 public:
  explicit EvenOddIntercomm(int tag);
  EvenOddIntercomm(const EvenOddIntercomm&) = delete;
  EvenOddIntercomm& operator=(const EvenOddIntercomm&) = delete;
  ~EvenOddIntercomm();
  MPI_Comm comm() const { return inter_; }

 private:
  MPI_Comm half_ = MPI_COMM_NULL;
  MPI_Comm inter_ = MPI_COMM_NULL;
};

}  // namespace shim::test
