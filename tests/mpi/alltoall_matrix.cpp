// Every alltoall algorithm, on every communicator shape, for many datatypes,
// compared byte for byte with PMPI_Alltoall on identically prepared buffers
// (so holes in non-contiguous types must be left untouched too), plus an
// independent value check for contiguous types. Linked with -lshim; algorithms
// are switched through the control API, and the counters prove that the
// requested algorithm really ran.
#include <mpi.h>
#include <shim/shim.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"
#include "tests/mpi/collective_setup.hpp"
#include "tests/mpi/typed_buffer.hpp"

namespace {

shim::test::Checker* check = nullptr;

struct TypeCase {
  std::string name;
  MPI_Datatype sendtype;
  MPI_Count sendcount;
  MPI_Datatype recvtype;
  MPI_Count recvcount;
  bool in_place = false;
  bool large_count_api = false;
  bool contiguous_ints = false;  // also checked against independently computed values
  // Even ranks pass their buffers as MPI_BOTTOM, each block one element of
  // absolute addresses; odd ranks pass them as they are.
  bool bottom_on_even_ranks = false;
  // Received into elements of different sizes: left to MPI whatever the
  // algorithm (shim's schedules would receive packed bytes into it).
  bool mixed_element_sizes = false;
  // World's duplicate runs world's schedules, so it takes only a case within
  // MPICH's eager size and one beyond: enough for the state cached on the
  // duplicate itself.
  bool on_duplicate = false;
};

using shim::test::pattern;
using shim::test::TypedBuffer;

std::vector<TypeCase> make_cases(shim::test::DerivedTypes& types) {
  std::vector<TypeCase> cases;
  cases.push_back({"int x1", MPI_INT, 1, MPI_INT, 1, false, false, true});
  cases.back().on_duplicate = true;
  cases.push_back({"int x3", MPI_INT, 3, MPI_INT, 3, false, false, true});
  cases.push_back({"double x5", MPI_DOUBLE, 5, MPI_DOUBLE, 5});
  cases.push_back({"char x7 (odd bytes)", MPI_CHAR, 7, MPI_CHAR, 7});
  cases.push_back({"double x2048 (16 KiB blocks)", MPI_DOUBLE, 2048, MPI_DOUBLE, 2048});
  cases.back().on_duplicate = true;
  const MPI_Datatype vector = types.strided_ints();
  cases.push_back({"vector(3,2,4) of int x2", vector, 2, vector, 2});
  const MPI_Datatype record = types.record();
  cases.push_back({"struct {int,double,char} x2", record, 2, record, 2});
  const MPI_Datatype spaced = types.spaced_int();
  cases.push_back({"int resized to extent 12 x3", spaced, 3, spaced, 3});
  const MPI_Datatype negative_lb = types.negative_lb_int();
  cases.push_back({"int resized lb -8 extent 16 x2", negative_lb, 2, negative_lb, 2});

  MPI_Datatype strided_recv;
  PMPI_Type_vector(3, 2, 3, MPI_INT, &strided_recv);
  strided_recv = types.commit(strided_recv);
  cases.push_back({"int x6 sent, vector(3,2,3) received", MPI_INT, 6, strided_recv, 1});

  // Type order differs from memory order: data must follow the typemap.
  const int index_lengths[2] = {1, 1};
  const int index_displs[2] = {1, 0};
  MPI_Datatype swapped;
  PMPI_Type_indexed(2, index_lengths, index_displs, MPI_INT, &swapped);
  swapped = types.commit(swapped);
  cases.push_back({"indexed {1,0} x3 sent, int x6 received", swapped, 3, MPI_INT, 6});

  cases.push_back({"MPI_DOUBLE_INT pair x2", MPI_DOUBLE_INT, 2, MPI_DOUBLE_INT, 2});
  // Elements of mixed sizes in blocks beyond MPICH's eager size, which
  // MPICH 4.0.2 cannot receive packed bytes into: shim leaves them to MPI.
  cases.push_back({"MPI_DOUBLE_INT pair x700 (8.2 KiB blocks)", MPI_DOUBLE_INT, 700, MPI_DOUBLE_INT, 700});
  cases.push_back({"struct {int,double,char} x650 (8.3 KiB blocks)", record, 650, record, 650});
  cases.push_back({"in place int x4", MPI_DATATYPE_NULL, 0, MPI_INT, 4, true});
  cases.push_back({"in place vector(3,2,4) x1", MPI_DATATYPE_NULL, 0, vector, 1, true});
  cases.push_back({"int x3, even ranks from MPI_BOTTOM", MPI_INT, 3, MPI_INT, 3, false, false, true, true});
  cases.push_back(
      {"vector(3,2,4) of int x2, even ranks from MPI_BOTTOM", vector, 2, vector, 2, false, false, false, true});
  cases.push_back(
      {"in place int x4, even ranks from MPI_BOTTOM", MPI_DATATYPE_NULL, 0, MPI_INT, 4, true, false, false, true});
  cases.push_back({"count 0", MPI_INT, 0, MPI_INT, 0});
  cases.push_back({"MPI_Alltoall_c double x5", MPI_DOUBLE, 5, MPI_DOUBLE, 5, false, true});
  cases.push_back({"MPI_Alltoall_c in place struct x1", MPI_DATATYPE_NULL, 0, record, 1, true, true});

  // A struct whose elements are all 4 bytes runs shim's algorithms, small
  // and beyond the eager size.
  const int pair_lengths[2] = {1, 2};
  const MPI_Aint pair_displs[2] = {0, 8};
  const MPI_Datatype pair_types[2] = {MPI_INT, MPI_FLOAT};
  MPI_Datatype int_floats, spaced_int_floats;
  PMPI_Type_create_struct(2, pair_lengths, pair_displs, pair_types, &int_floats);
  PMPI_Type_create_resized(int_floats, 0, 20, &spaced_int_floats);
  PMPI_Type_free(&int_floats);
  spaced_int_floats = types.commit(spaced_int_floats);
  cases.push_back({"struct {int,_,float,float} extent 20 x3", spaced_int_floats, 3, spaced_int_floats, 3});
  cases.push_back(
      {"struct {int,_,float,float} extent 20 x700 (8.2 KiB blocks)", spaced_int_floats, 700, spaced_int_floats, 700});
  // (Not in place: MPICH 4.0.2's own in-place alltoall, the reference,
  // fails beyond the eager size for a non-contiguous type, shim's or not.)

  for (TypeCase& c : cases) c.mixed_element_sizes = c.recvtype == MPI_DOUBLE_INT || c.recvtype == record;
  return cases;
}

int call_alltoall(const TypeCase& c, const void* sendbuf, void* recvbuf, MPI_Comm comm, bool reference) {
  const void* send = c.in_place ? MPI_IN_PLACE : sendbuf;
  if (reference) return PMPI_Alltoall_c(send, c.sendcount, c.sendtype, recvbuf, c.recvcount, c.recvtype, comm);
  if (c.large_count_api) return MPI_Alltoall_c(send, c.sendcount, c.sendtype, recvbuf, c.recvcount, c.recvtype, comm);
  return MPI_Alltoall(send, static_cast<int>(c.sendcount), c.sendtype, recvbuf, static_cast<int>(c.recvcount),
                      c.recvtype, comm);
}

// Runs one case through shim and through PMPI and compares.
// `reference` holds PMPI_Alltoall's result for this case on `comm`: empty,
// the case computes it; the algorithms after the first compare against it
// (their inputs are the same), which halves the collectives a pass runs.
void run_case(const TypeCase& c, MPI_Comm comm, const std::string& where, std::vector<unsigned char>& reference) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  TypedBuffer send(c.in_place ? c.recvtype : c.sendtype, (c.in_place ? c.recvcount : c.sendcount) * size);
  TypedBuffer got(c.recvtype, c.recvcount * size);
  TypedBuffer want(c.recvtype, c.recvcount * size);
  send.fill(rank);
  if (c.in_place) {
    got.fill(rank);
    want.fill(rank);
  }
  TypeCase shim_call = c, reference_call = c;
  const void* send_at = send.data();
  void* got_at = got.data();
  void* want_at = want.data();
  shim::test::DerivedTypes absolute;
  if (c.bottom_on_even_ranks && rank % 2 == 0) {
    if (!c.in_place) {
      shim_call.sendtype = reference_call.sendtype =
          absolute.commit(shim::test::absolute_elements(send.data(), c.sendcount, c.sendtype));
      shim_call.sendcount = reference_call.sendcount = 1;
      send_at = MPI_BOTTOM;
    }
    shim_call.recvtype = absolute.commit(shim::test::absolute_elements(got.data(), c.recvcount, c.recvtype));
    reference_call.recvtype = absolute.commit(shim::test::absolute_elements(want.data(), c.recvcount, c.recvtype));
    shim_call.recvcount = reference_call.recvcount = 1;
    got_at = want_at = MPI_BOTTOM;
  }
  const int rc = call_alltoall(shim_call, send_at, got_at, comm, false);
  check->expect(rc == MPI_SUCCESS, where + " " + c.name + ": MPI_Alltoall returned " + std::to_string(rc));
  if (reference.empty()) {
    call_alltoall(reference_call, send_at, want_at, comm, true);
    reference = want.bytes;
  }

  const auto mismatch = std::mismatch(got.bytes.begin(), got.bytes.end(), reference.begin());
  check->expect(mismatch.first == got.bytes.end(), where + " " + c.name + ": differs from PMPI_Alltoall at byte " +
                                                       std::to_string(mismatch.first - got.bytes.begin()) + " of " +
                                                       std::to_string(got.bytes.size()));

  if (c.contiguous_ints) {
    // Block from rank s is what s put at block `rank` of its send buffer.
    const std::size_t block = sizeof(int) * static_cast<std::size_t>(c.recvcount);
    bool ok = true;
    for (int s = 0; s < size && ok; ++s) {
      for (std::size_t b = 0; b < block; ++b) {
        ok = ok && got.bytes[got.origin + s * block + b] == pattern(s, send.origin + rank * block + b);
      }
    }
    check->expect(ok, where + " " + c.name + ": values differ from the independently computed ones");
  }
}

void run_case(const TypeCase& c, MPI_Comm comm, const std::string& where) {
  std::vector<unsigned char> reference;
  run_case(c, comm, where, reference);
}

shim_counters counters(shim_alltoall_algorithm algorithm) {
  shim_counters c{};
  shim_get_alltoall_counters(algorithm, &c);
  return c;
}

// On a job that lives on one node, or on two nodes of one process each,
// shim's fast path sends MPI_Alltoall straight to PMPI while no algorithm is
// forced, and keeps no counts then (from three nodes of one, the policy takes
// linear).
bool policy_always_native() {
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* node_size = std::getenv("SHIM_NODE_SIZE");
  const int per_node = node_size == nullptr ? shim::test::processes_on_this_host() : std::atoi(node_size);
  return per_node >= size || (per_node == 1 && size <= 2);
}

constexpr shim_alltoall_algorithm kAlgorithms[] = {SHIM_ALLTOALL_NATIVE, SHIM_ALLTOALL_SA,     SHIM_ALLTOALL_RD,
                                                   SHIM_ALLTOALL_LEADER, SHIM_ALLTOALL_LINEAR, SHIM_ALLTOALL_NODE_PAIRS,
                                                   SHIM_ALLTOALL_AUTO};
const char* const kAlgorithmNames[] = {"auto", "native", "sa", "rd", "leader", "linear", "node-pairs"};

// The algorithms named on the command line (`--only linear,node-pairs`), or
// all: the many-process runs take only those whose schedules change there.
std::vector<shim_alltoall_algorithm> algorithms_to_run(int argc, char** argv) {
  std::vector<shim_alltoall_algorithm> chosen;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) != "--only") continue;
    const std::string list = "," + std::string(argv[i + 1]) + ",";
    for (shim_alltoall_algorithm algorithm : kAlgorithms) {
      if (list.find("," + std::string(kAlgorithmNames[algorithm]) + ",") != std::string::npos) {
        chosen.push_back(algorithm);
      }
    }
  }
  if (chosen.empty()) chosen.assign(std::begin(kAlgorithms), std::end(kAlgorithms));
  return chosen;
}

void run_matrix(const std::vector<TypeCase>& cases, const std::vector<shim_alltoall_algorithm>& algorithms) {
  const bool fast_path = policy_always_native();
  // Runs narrowed to some algorithms (`--only`) test schedules that change
  // with many processes per node or many peers, which only the
  // communicators of every rank have.
  const bool every_rank_only = algorithms.size() < std::size(kAlgorithms);
  int world_size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (shim::test::NamedComm& named : shim::test::test_communicators(true)) {
    if (named.comm == MPI_COMM_NULL) continue;
    int size = 0;
    PMPI_Comm_size(named.comm, &size);
    if (every_rank_only && size < world_size) {
      shim::test::free_test_communicator(named);
      continue;
    }
    std::vector<std::vector<unsigned char>> references(cases.size());
    for (shim_alltoall_algorithm algorithm : algorithms) {
      const std::string where = named.name + "/" + kAlgorithmNames[algorithm];
      check->expect(shim_set_alltoall_algorithm(named.comm, algorithm) == MPI_SUCCESS, where + ": select algorithm");
      const shim_counters before = counters(algorithm);
      long handled = 0;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const TypeCase& c = cases[i];
        if (named.duplicate_of_world && !c.on_duplicate) continue;
        run_case(c, named.comm, where, references[i]);
        handled += shim::test::no_data(c.recvtype, c.recvcount) || c.mixed_element_sizes ? 0 : 1;
      }
      // Empty exchanges go to native untouched and uncounted; every other
      // call must have run the algorithm that was asked for.
      const shim_counters after = counters(algorithm);
      if (algorithm == SHIM_ALLTOALL_AUTO && fast_path) handled = 0;
      check->expect(static_cast<long>(after.calls - before.calls) == handled,
                    where + ": " + std::to_string(after.calls - before.calls) + " calls counted, expected " +
                        std::to_string(handled));
    }
    check->expect(shim_set_alltoall_algorithm(named.comm, SHIM_ALLTOALL_AUTO) == MPI_SUCCESS, "reset to auto");
    shim::test::free_test_communicator(named);
  }
}

// Internal messages must not be matched by the application's wildcard receive.
void pending_wildcard_receive() {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // MPICH 4.0.2's own PMPI_Alltoall hangs on a one-rank communicator while a
  // wildcard receive is pending on it (reproduced without shim).
  if (size == 1) return;
  int incoming = -1;
  MPI_Request request;
  PMPI_Irecv(&incoming, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_SA);
  run_case({"int x3 under a pending wildcard receive", MPI_INT, 3, MPI_INT, 3, false, false, true}, MPI_COMM_WORLD,
           "world/sa");
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_AUTO);
  const int message = 1000 + rank;
  PMPI_Send(&message, 1, MPI_INT, (rank + 1) % size, 77, MPI_COMM_WORLD);
  MPI_Status status;
  PMPI_Wait(&request, &status);
  const int from = (rank - 1 + size) % size;
  check->expect(incoming == 1000 + from && status.MPI_TAG == 77 && status.MPI_SOURCE == from,
                "wildcard receive got value " + std::to_string(incoming) + " tag " + std::to_string(status.MPI_TAG));
}

// Freed communicators' handles are reused; cached state must not be.
void reused_handles() {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int colors[3] = {0, rank % 2, rank < size / 2 ? 0 : 1};
  for (int round = 0; round < 3; ++round) {
    MPI_Comm comm;
    PMPI_Comm_split(MPI_COMM_WORLD, colors[round], round == 1 ? -rank : rank, &comm);
    for (shim_alltoall_algorithm algorithm : {SHIM_ALLTOALL_SA, SHIM_ALLTOALL_LEADER}) {
      shim_set_alltoall_algorithm(comm, algorithm);
      run_case({"int x1 on a re-created communicator", MPI_INT, 1, MPI_INT, 1, false, false, true}, comm,
               "round " + std::to_string(round) + "/" + kAlgorithmNames[algorithm]);
    }
    PMPI_Comm_free(&comm);
  }
}

// shim keeps its answer about a derived receive type on the type: a freed
// type's handle, reused for a type of another kind, must get a fresh one,
// and a duplicate the same one.
void cached_type_answers() {
  const int lengths[2] = {1, 1};
  const MPI_Aint displs[2] = {0, 8};
  const MPI_Datatype mixed_members[2] = {MPI_INT, MPI_DOUBLE};
  const MPI_Datatype even_members[2] = {MPI_INT, MPI_FLOAT};
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_SA);
  for (int round = 0; round < 4; ++round) {
    const bool mixed = round % 2 == 0;
    MPI_Datatype type, copy;
    PMPI_Type_create_struct(2, lengths, displs, mixed ? mixed_members : even_members, &type);
    PMPI_Type_commit(&type);
    for (int call = 0; call < 3; ++call) {
      // The third call goes through a duplicate made after the type was used.
      if (call == 2) PMPI_Type_dup(type, &copy);
      const MPI_Datatype used = call == 2 ? copy : type;
      const shim_counters before = counters(SHIM_ALLTOALL_SA);
      run_case({"struct {int,double or float} x2", used, 2, used, 2}, MPI_COMM_WORLD,
               "round " + std::to_string(round) + " call " + std::to_string(call));
      const auto counted = counters(SHIM_ALLTOALL_SA).calls - before.calls;
      check->expect(counted == (mixed ? 0u : 1u), "round " + std::to_string(round) + " call " + std::to_string(call) +
                                                      ": " + std::to_string(counted) + " calls counted as sa's");
    }
    PMPI_Type_free(&copy);
    PMPI_Type_free(&type);
  }
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_AUTO);
}

void intercommunicator_goes_native() {
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;
  const shim::test::EvenOddIntercomm inter(5);
  const shim_counters before = counters(SHIM_ALLTOALL_AUTO);
  run_case({"int x2 on an intercommunicator", MPI_INT, 2, MPI_INT, 2}, inter.comm(), "intercomm");
  check->expect(counters(SHIM_ALLTOALL_AUTO).calls == before.calls, "intercomm call was not left to native");
}

void control_api() {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  check->expect(std::strcmp(shim_version(), SHIM_VERSION_STRING) == 0, "shim_version matches the header");

  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
  PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  check->expect(shim_set_alltoall_algorithm(comm, static_cast<shim_alltoall_algorithm>(99)) == MPI_ERR_ARG,
                "unknown algorithm is MPI_ERR_ARG");
  if (size > 1) {
    const auto mine = rank == 0 ? SHIM_ALLTOALL_SA : SHIM_ALLTOALL_RD;
    check->expect(shim_set_alltoall_algorithm(comm, mine) == MPI_ERR_ARG, "disagreeing algorithms are MPI_ERR_ARG");
    check->expect(shim_set_enabled(comm, rank == 0) == MPI_ERR_ARG, "disagreeing switches are MPI_ERR_ARG");
  }
  check->expect(shim_get_alltoall_counters(SHIM_ALLTOALL_SA, nullptr) == MPI_ERR_ARG, "null counters is MPI_ERR_ARG");

  // Switched off: pure pass-through, nothing counted, still correct.
  check->expect(shim_set_alltoall_algorithm(comm, SHIM_ALLTOALL_SA) == MPI_SUCCESS, "select sa");
  check->expect(shim_set_enabled(comm, 0) == MPI_SUCCESS, "switch off");
  int enabled = -1;
  shim_get_enabled(comm, &enabled);
  check->expect(enabled == 0, "reports off");
  const shim_counters before = counters(SHIM_ALLTOALL_AUTO);
  run_case({"int x3 with shim switched off", MPI_INT, 3, MPI_INT, 3, false, false, true}, comm, "off");
  check->expect(counters(SHIM_ALLTOALL_AUTO).calls == before.calls, "switched-off call was counted");
  check->expect(shim_set_enabled(comm, 1) == MPI_SUCCESS, "switch on");
  run_case({"int x3 with shim switched on again", MPI_INT, 3, MPI_INT, 3, false, false, true}, comm, "on");
  check->expect(counters(SHIM_ALLTOALL_AUTO).calls == before.calls + 1, "switched-on call was counted once");

  // One buffer for both sides without MPI_IN_PLACE: the error MPICH gives.
  std::vector<int> both(static_cast<std::size_t>(2 * size), rank);
  const int shim_rc = MPI_Alltoall(both.data(), 2, MPI_INT, both.data(), 2, MPI_INT, comm);
  const int mpich_rc = PMPI_Alltoall(both.data(), 2, MPI_INT, both.data(), 2, MPI_INT, comm);
  int shim_class = shim_rc, mpich_class = mpich_rc;
  if (shim_rc != MPI_SUCCESS) PMPI_Error_class(shim_rc, &shim_class);
  if (mpich_rc != MPI_SUCCESS) PMPI_Error_class(mpich_rc, &mpich_class);
  check->expect(shim_class == mpich_class, "send buffer = receive buffer: class " + std::to_string(shim_class) +
                                               ", MPICH's " + std::to_string(mpich_class));
  PMPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("alltoall_matrix");
  check = &checker;
  {
    shim::test::DerivedTypes types;
    run_matrix(make_cases(types), algorithms_to_run(argc, argv));
    pending_wildcard_receive();
    reused_handles();
    cached_type_answers();
    intercommunicator_goes_native();
    control_api();
  }
  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
