// The accumulate family accepts and computes on shim's windows as on
// MPICH's own: every predefined op (and MPI_REPLACE, MPI_NO_OP) with every
// predefined datatype, in MPI_Accumulate, MPI_Get_accumulate and
// MPI_Fetch_and_op, and MPI_Compare_and_swap with every datatype. Rank 0
// operates on rank 1's memory of a window from MPICH's PMPI_Win_allocate
// and of one from shim's MPI_Win_allocate, in the same run, and compares the
// error class, the target's bytes afterwards and the fetched bytes.
//
// Which ops MPICH can apply is found here independently of shim: by
// MPI_Reduce_local in a child process (MPICH 4.0.2 aborts inside a few
// kernels it lets through), forked by a helper that this program starts as
// a plain MPI singleton, without shim and without threads (forking an MPI
// process with threads running can deadlock the child). Those it cannot apply are not run natively
// (MPICH 4.0.2 takes the call and then never completes the epoch, or leaves
// the target unchanged); shim must refuse them with MPI_Reduce_local's class
// and leave the target untouched. Unsigned MPI_MAX and MPI_MIN are compared
// with C++'s unsigned order instead of MPICH's (pmodels/mpich#6083: MPICH
// 4.0.2 compares them as signed).
#include <fcntl.h>
#include <mpi.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/checker.hpp"

using shim::test::error_class;

namespace {

shim::test::Checker* g_check = nullptr;

#define NAMED(handle) \
  std::pair { handle, #handle }
const std::pair<MPI_Datatype, const char*> kTypes[] = {NAMED(MPI_CHAR),
                                                       NAMED(MPI_SIGNED_CHAR),
                                                       NAMED(MPI_UNSIGNED_CHAR),
                                                       NAMED(MPI_BYTE),
                                                       NAMED(MPI_WCHAR),
                                                       NAMED(MPI_SHORT),
                                                       NAMED(MPI_UNSIGNED_SHORT),
                                                       NAMED(MPI_INT),
                                                       NAMED(MPI_UNSIGNED),
                                                       NAMED(MPI_LONG),
                                                       NAMED(MPI_UNSIGNED_LONG),
                                                       NAMED(MPI_FLOAT),
                                                       NAMED(MPI_DOUBLE),
                                                       NAMED(MPI_LONG_DOUBLE),
                                                       NAMED(MPI_LONG_LONG_INT),
                                                       NAMED(MPI_UNSIGNED_LONG_LONG),
                                                       NAMED(MPI_PACKED),
                                                       NAMED(MPI_FLOAT_INT),
                                                       NAMED(MPI_DOUBLE_INT),
                                                       NAMED(MPI_LONG_INT),
                                                       NAMED(MPI_SHORT_INT),
                                                       NAMED(MPI_2INT),
                                                       NAMED(MPI_LONG_DOUBLE_INT),
                                                       NAMED(MPI_COMPLEX),
                                                       NAMED(MPI_DOUBLE_COMPLEX),
                                                       NAMED(MPI_LOGICAL),
                                                       NAMED(MPI_REAL),
                                                       NAMED(MPI_DOUBLE_PRECISION),
                                                       NAMED(MPI_INTEGER),
                                                       NAMED(MPI_2INTEGER),
                                                       NAMED(MPI_2REAL),
                                                       NAMED(MPI_2DOUBLE_PRECISION),
                                                       NAMED(MPI_CHARACTER),
                                                       NAMED(MPI_REAL4),
                                                       NAMED(MPI_REAL8),
                                                       NAMED(MPI_REAL16),
                                                       NAMED(MPI_COMPLEX8),
                                                       NAMED(MPI_COMPLEX16),
                                                       NAMED(MPI_COMPLEX32),
                                                       NAMED(MPI_INTEGER1),
                                                       NAMED(MPI_INTEGER2),
                                                       NAMED(MPI_INTEGER4),
                                                       NAMED(MPI_INTEGER8),
                                                       NAMED(MPI_INTEGER16),
                                                       NAMED(MPI_INT8_T),
                                                       NAMED(MPI_INT16_T),
                                                       NAMED(MPI_INT32_T),
                                                       NAMED(MPI_INT64_T),
                                                       NAMED(MPI_UINT8_T),
                                                       NAMED(MPI_UINT16_T),
                                                       NAMED(MPI_UINT32_T),
                                                       NAMED(MPI_UINT64_T),
                                                       NAMED(MPI_C_BOOL),
                                                       NAMED(MPI_C_FLOAT_COMPLEX),
                                                       NAMED(MPI_C_DOUBLE_COMPLEX),
                                                       NAMED(MPI_C_LONG_DOUBLE_COMPLEX),
                                                       NAMED(MPI_AINT),
                                                       NAMED(MPI_OFFSET),
                                                       NAMED(MPI_COUNT),
                                                       NAMED(MPI_CXX_BOOL),
                                                       NAMED(MPI_CXX_FLOAT_COMPLEX),
                                                       NAMED(MPI_CXX_DOUBLE_COMPLEX),
                                                       NAMED(MPI_CXX_LONG_DOUBLE_COMPLEX)};
const std::pair<MPI_Op, const char*> kOps[] = {
    NAMED(MPI_MAX),    NAMED(MPI_MIN),    NAMED(MPI_SUM),     NAMED(MPI_PROD), NAMED(MPI_LAND),
    NAMED(MPI_BAND),   NAMED(MPI_LOR),    NAMED(MPI_BOR),     NAMED(MPI_LXOR), NAMED(MPI_BXOR),
    NAMED(MPI_MINLOC), NAMED(MPI_MAXLOC), NAMED(MPI_REPLACE), NAMED(MPI_NO_OP)};
const std::pair<MPI_Datatype, int> kUnsigned[] = {
    {MPI_UNSIGNED_CHAR, 1}, {MPI_UNSIGNED_SHORT, 2},     {MPI_UNSIGNED, 4},
    {MPI_UNSIGNED_LONG, 8}, {MPI_UNSIGNED_LONG_LONG, 8}, {MPI_UINT8_T, 1},
    {MPI_UINT16_T, 2},      {MPI_UINT32_T, 4},           {MPI_UINT64_T, 8}};

enum class Call { accumulate, get_accumulate, fetch_and_op, compare_and_swap };
const char* name(Call call) {
  constexpr const char* kNames[] = {"MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap"};
  return kNames[static_cast<int>(call)];
}

constexpr int kElements = 2;
constexpr MPI_Aint kBytes = 512;

// MPI_Reduce_local's class for op on type, in a child (-1: it died).
int reduce_local_class(MPI_Op op, MPI_Datatype type) {
  int ends[2];
  if (pipe(ends) != 0) return -2;
  const pid_t child = fork();
  if (child == 0) {
    dup2(open("/dev/null", O_WRONLY), STDERR_FILENO);
    alignas(64) unsigned char in[256] = {}, inout[256] = {};
    const int cls = error_class(MPI_Reduce_local(in, inout, kElements, type, op));
    _exit(write(ends[1], &cls, sizeof cls) == sizeof cls ? 0 : 1);
  }
  close(ends[1]);
  int cls = -1;
  if (read(ends[0], &cls, sizeof cls) != sizeof cls) cls = -1;
  close(ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return cls;
}

// Runs this program as a singleton helper (--mpich-kernels) and reads its
// verdict: MPI_Reduce_local's class for every reduction and type.
std::map<std::pair<int, int>, int> mpich_kernels(const char* program) {
  std::vector<std::string> kept;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string entry(*variable);
    // Not part of the job: no PMI, and shim off (a plain MPI program).
    if (entry.rfind("PMI_", 0) == 0 || entry.rfind("HYDRA_", 0) == 0 || entry.rfind("HYDI_", 0) == 0 ||
        entry.rfind("MPIR_", 0) == 0 || entry.rfind("SHIM_", 0) == 0) {
      continue;
    }
    kept.push_back(entry);
  }
  kept.push_back("SHIM_ENABLE=0");
  std::vector<char*> env;
  for (std::string& entry : kept) env.push_back(entry.data());
  env.push_back(nullptr);
  int ends[2];
  std::map<std::pair<int, int>, int> classes;
  if (pipe(ends) != 0) return classes;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ends[0]);
  char flag[] = "--mpich-kernels";
  std::string path(program);
  char* argv[] = {path.data(), flag, nullptr};
  pid_t helper = 0;
  const int spawned = posix_spawn(&helper, program, &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(ends[1]);
  std::string text;
  char chunk[4096];
  for (ssize_t n; (n = read(ends[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
  close(ends[0]);
  if (spawned == 0) waitpid(helper, nullptr, 0);
  std::istringstream lines(text);
  for (int op = 0, type = 0, cls = 0; lines >> op >> type >> cls;) classes[{op, type}] = cls;
  return classes;
}

// Origin and target bytes: high bits in every other byte, in opposite
// bytes of the two (seed 3 and seed 11), so signed and unsigned orders
// differ; exponents of floating types stay moderate.
void fill(unsigned char* bytes, MPI_Aint count, int seed) {
  for (MPI_Aint i = 0; i < count; ++i) {
    bytes[i] = static_cast<unsigned char>(((i * 37 + seed) & 0x3f) | (((i + seed / 8) & 1) << 7));
  }
}

struct Outcome {
  int rc = MPI_SUCCESS;
  std::vector<unsigned char> target;  // rank 1's bytes afterwards, packed with the type
  std::vector<unsigned char> fetched;
};

// Rank 0 runs `call` on rank 1's element 0..1 of `win`; every rank gets the
// outcome.
Outcome run(MPI_Win win, unsigned char* base, Call call, MPI_Datatype type, MPI_Op op) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fill(base, kBytes, 11);
  MPI_Barrier(MPI_COMM_WORLD);
  Outcome outcome;
  std::vector<unsigned char> origin(kBytes), compare(kBytes), result(kBytes, 0);
  fill(origin.data(), kBytes, 3);
  fill(compare.data(), kBytes, 11);  // equal to the target: the swap happens
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    switch (call) {
      case Call::accumulate:
        outcome.rc = MPI_Accumulate(origin.data(), kElements, type, 1, 0, kElements, type, op, win);
        break;
      case Call::get_accumulate:
        outcome.rc = MPI_Get_accumulate(origin.data(), kElements, type, result.data(), kElements, type, 1, 0, kElements,
                                        type, op, win);
        break;
      case Call::fetch_and_op:
        outcome.rc = MPI_Fetch_and_op(origin.data(), result.data(), type, 1, 0, op, win);
        break;
      case Call::compare_and_swap:
        outcome.rc = MPI_Compare_and_swap(origin.data(), compare.data(), result.data(), type, 1, 0, win);
        break;
    }
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int size = 0;
  MPI_Pack_size(kElements, type, MPI_COMM_WORLD, &size);
  outcome.target.resize(static_cast<std::size_t>(size));
  outcome.fetched.resize(static_cast<std::size_t>(size));
  int position = 0;
  if (rank == 1) MPI_Pack(base, kElements, type, outcome.target.data(), size, &position, MPI_COMM_WORLD);
  MPI_Bcast(outcome.target.data(), size, MPI_BYTE, 1, MPI_COMM_WORLD);
  position = 0;
  if (rank == 0) MPI_Pack(result.data(), kElements, type, outcome.fetched.data(), size, &position, MPI_COMM_WORLD);
  MPI_Bcast(outcome.fetched.data(), size, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&outcome.rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return outcome;
}

// The target's packed bytes after unsigned MAX/MIN, as C++ orders them.
std::vector<unsigned char> unsigned_extreme(MPI_Op op, int width, const std::vector<unsigned char>& before,
                                            int elements) {
  std::vector<unsigned char> origin(kBytes), after(before);
  fill(origin.data(), kBytes, 3);
  for (int e = 0; e < elements; ++e) {
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, origin.data() + e * width, static_cast<std::size_t>(width));
    std::memcpy(&b, before.data() + e * width, static_cast<std::size_t>(width));
    const std::uint64_t pick = op == MPI_MAX ? std::max(a, b) : std::min(a, b);
    std::memcpy(after.data() + e * width, &pick, static_cast<std::size_t>(width));
  }
  return after;
}

int unsigned_width(MPI_Datatype type) {
  for (const auto& [t, width] : kUnsigned) {
    if (t == type) return width;
  }
  return 0;
}

void compare(Call call, MPI_Datatype type, const char* type_name, MPI_Op op, const char* op_name, bool mpich_applies,
             int mpich_class, MPI_Win native, unsigned char* native_base, MPI_Win managed, unsigned char* managed_base,
             long& compared, long& refused) {
  const std::string what = std::string(name(call)) + " " + op_name + " " + type_name;
  const Outcome got = run(managed, managed_base, call, type, op);
  if (!mpich_applies) {
    ++refused;
    const Outcome untouched = run(managed, managed_base, Call::get_accumulate, type, MPI_NO_OP);
    g_check->expect(error_class(got.rc) == mpich_class, what + ": refused with MPI_Reduce_local's class " +
                                                            std::to_string(mpich_class) + " (got " +
                                                            std::to_string(error_class(got.rc)) + ")");
    g_check->expect(got.target == untouched.fetched, what + ": the target is untouched");
    return;
  }
  ++compared;
  const Outcome expected = run(native, native_base, call, type, op);
  g_check->expect(error_class(got.rc) == error_class(expected.rc),
                  what + ": class " + std::to_string(error_class(got.rc)) + ", MPICH's " +
                      std::to_string(error_class(expected.rc)));
  if (expected.rc != MPI_SUCCESS) return;
  const int width = unsigned_width(type);
  if (width > 0 && (op == MPI_MAX || op == MPI_MIN)) {
    std::vector<unsigned char> before(expected.target.size());
    fill(before.data(), static_cast<MPI_Aint>(before.size()), 11);
    const int elements = call == Call::fetch_and_op ? 1 : kElements;
    g_check->expect(got.target == unsigned_extreme(op, width, before, elements),
                    what + ": unsigned order (MPICH #6083)");
  } else {
    g_check->expect(got.target == expected.target, what + ": the target's bytes as MPICH leaves them");
  }
  if (call != Call::accumulate) g_check->expect(got.fetched == expected.fetched, what + ": the fetched bytes");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--mpich-kernels") {
    MPI_Init(&argc, &argv);
    for (const auto& [type, type_name] : kTypes) {
      if (type == MPI_DATATYPE_NULL) continue;
      for (const auto& [op, op_name] : kOps) {
        if (op == MPI_REPLACE || op == MPI_NO_OP) continue;
        std::printf("%d %d %d\n", static_cast<int>(op), static_cast<int>(type), reduce_local_class(op, type));
      }
    }
    MPI_Finalize();
    return 0;
  }
  MPI_Init(&argc, &argv);
  shim::test::Checker check("op_type_parity");
  g_check = &check;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    check.fail("run with 2 processes");
    return check.finish();
  }
  unsigned char* native_base = nullptr;
  unsigned char* managed_base = nullptr;
  MPI_Win native = MPI_WIN_NULL, managed = MPI_WIN_NULL;
  PMPI_Win_allocate(kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &native_base, &native);
  MPI_Win_allocate(kBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &managed_base, &managed);
  MPI_Win_set_errhandler(native, MPI_ERRORS_RETURN);
  MPI_Win_set_errhandler(managed, MPI_ERRORS_RETURN);
  long compared = 0, refused = 0;
  const std::map<std::pair<int, int>, int> kernels = mpich_kernels(argv[0]);
  check.expect(kernels.size() > 500, "the helper classified " + std::to_string(kernels.size()) + " reductions");
  for (const auto& [type, type_name] : kTypes) {
    if (type == MPI_DATATYPE_NULL) continue;
    for (const auto& [op, op_name] : kOps) {
      const bool reduction = op != MPI_REPLACE && op != MPI_NO_OP;
      const auto found = kernels.find({static_cast<int>(op), static_cast<int>(type)});
      const int cls = !reduction ? MPI_SUCCESS : found == kernels.end() ? -1 : found->second;
      const bool applies = cls == MPI_SUCCESS;
      const int mpich_class = cls < 0 ? MPI_ERR_OP : cls;
      for (Call call : {Call::accumulate, Call::get_accumulate, Call::fetch_and_op}) {
        // MPICH refuses MPI_NO_OP in MPI_Accumulate itself: compared natively.
        compare(call, type, type_name, op, op_name, applies, mpich_class, native, native_base, managed, managed_base,
                compared, refused);
      }
    }
    compare(Call::compare_and_swap, type, type_name, MPI_REPLACE, "", true, MPI_SUCCESS, native, native_base, managed,
            managed_base, compared, refused);
  }
  if (rank == 0) {
    std::printf("op_type_parity: %ld calls compared with MPICH's, %ld refused where MPICH has no kernel\n", compared,
                refused);
  }
  PMPI_Win_free(&native);
  MPI_Win_free(&managed);
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
