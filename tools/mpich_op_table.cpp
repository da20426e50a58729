// A build-time probe of the MPICH shim is built against: which predefined
// reduction applies to which predefined datatype, and which datatypes
// MPI_Compare_and_swap takes. Writes them as C++ table rows, which
// rma/op_acceptance.cpp compiles in, so that shim accepts in the accumulate
// family what MPICH accepts, from MPICH itself rather than the standard.
//
// A reduction counts as taken when MPI_Reduce_local applies it. Each is
// tried in a child process: MPICH 4.0.2 passes MPI_LAND and MPI_LOR on
// MPI_FLOAT, MPI_DOUBLE and MPI_LONG_DOUBLE through its check and then
// aborts in the kernel, as its accumulates would at the target.
//
//   mpich_op_table OUTPUT      (runs as an MPI singleton, no mpiexec)
#include <fcntl.h>
#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <utility>

namespace {

#define SHIM_NAMED(handle) \
  std::pair { handle, #handle }

// Every predefined datatype of MPICH's mpi.h.
const std::array kTypes = {SHIM_NAMED(MPI_CHAR),
                           SHIM_NAMED(MPI_SIGNED_CHAR),
                           SHIM_NAMED(MPI_UNSIGNED_CHAR),
                           SHIM_NAMED(MPI_BYTE),
                           SHIM_NAMED(MPI_WCHAR),
                           SHIM_NAMED(MPI_SHORT),
                           SHIM_NAMED(MPI_UNSIGNED_SHORT),
                           SHIM_NAMED(MPI_INT),
                           SHIM_NAMED(MPI_UNSIGNED),
                           SHIM_NAMED(MPI_LONG),
                           SHIM_NAMED(MPI_UNSIGNED_LONG),
                           SHIM_NAMED(MPI_FLOAT),
                           SHIM_NAMED(MPI_DOUBLE),
                           SHIM_NAMED(MPI_LONG_DOUBLE),
                           SHIM_NAMED(MPI_LONG_LONG_INT),
                           SHIM_NAMED(MPI_UNSIGNED_LONG_LONG),
                           SHIM_NAMED(MPI_PACKED),
                           SHIM_NAMED(MPI_FLOAT_INT),
                           SHIM_NAMED(MPI_DOUBLE_INT),
                           SHIM_NAMED(MPI_LONG_INT),
                           SHIM_NAMED(MPI_SHORT_INT),
                           SHIM_NAMED(MPI_2INT),
                           SHIM_NAMED(MPI_LONG_DOUBLE_INT),
                           SHIM_NAMED(MPI_COMPLEX),
                           SHIM_NAMED(MPI_DOUBLE_COMPLEX),
                           SHIM_NAMED(MPI_LOGICAL),
                           SHIM_NAMED(MPI_REAL),
                           SHIM_NAMED(MPI_DOUBLE_PRECISION),
                           SHIM_NAMED(MPI_INTEGER),
                           SHIM_NAMED(MPI_2INTEGER),
                           SHIM_NAMED(MPI_2REAL),
                           SHIM_NAMED(MPI_2DOUBLE_PRECISION),
                           SHIM_NAMED(MPI_CHARACTER),
                           SHIM_NAMED(MPI_REAL4),
                           SHIM_NAMED(MPI_REAL8),
                           SHIM_NAMED(MPI_REAL16),
                           SHIM_NAMED(MPI_COMPLEX8),
                           SHIM_NAMED(MPI_COMPLEX16),
                           SHIM_NAMED(MPI_COMPLEX32),
                           SHIM_NAMED(MPI_INTEGER1),
                           SHIM_NAMED(MPI_INTEGER2),
                           SHIM_NAMED(MPI_INTEGER4),
                           SHIM_NAMED(MPI_INTEGER8),
                           SHIM_NAMED(MPI_INTEGER16),
                           SHIM_NAMED(MPI_INT8_T),
                           SHIM_NAMED(MPI_INT16_T),
                           SHIM_NAMED(MPI_INT32_T),
                           SHIM_NAMED(MPI_INT64_T),
                           SHIM_NAMED(MPI_UINT8_T),
                           SHIM_NAMED(MPI_UINT16_T),
                           SHIM_NAMED(MPI_UINT32_T),
                           SHIM_NAMED(MPI_UINT64_T),
                           SHIM_NAMED(MPI_C_BOOL),
                           SHIM_NAMED(MPI_C_FLOAT_COMPLEX),
                           SHIM_NAMED(MPI_C_DOUBLE_COMPLEX),
                           SHIM_NAMED(MPI_C_LONG_DOUBLE_COMPLEX),
                           SHIM_NAMED(MPI_AINT),
                           SHIM_NAMED(MPI_OFFSET),
                           SHIM_NAMED(MPI_COUNT),
                           SHIM_NAMED(MPI_CXX_BOOL),
                           SHIM_NAMED(MPI_CXX_FLOAT_COMPLEX),
                           SHIM_NAMED(MPI_CXX_DOUBLE_COMPLEX),
                           SHIM_NAMED(MPI_CXX_LONG_DOUBLE_COMPLEX)};

const std::array kReductions = {SHIM_NAMED(MPI_MAX),  SHIM_NAMED(MPI_MIN),    SHIM_NAMED(MPI_SUM),
                                SHIM_NAMED(MPI_PROD), SHIM_NAMED(MPI_LAND),   SHIM_NAMED(MPI_BAND),
                                SHIM_NAMED(MPI_LOR),  SHIM_NAMED(MPI_BOR),    SHIM_NAMED(MPI_LXOR),
                                SHIM_NAMED(MPI_BXOR), SHIM_NAMED(MPI_MINLOC), SHIM_NAMED(MPI_MAXLOC)};

int error_class(int rc) {
  int cls = MPI_ERR_OTHER;
  return MPI_Error_class(rc, &cls) == MPI_SUCCESS ? cls : MPI_ERR_OTHER;
}

// MPI_Reduce_local of two elements in a child; MPI_ERR_OP when it dies.
int reduction_class(MPI_Op op, MPI_Datatype type) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    const int quiet = open("/dev/null", O_WRONLY);
    dup2(quiet, STDERR_FILENO);
    alignas(64) unsigned char in[256] = {};
    alignas(64) unsigned char inout[256] = {};
    const int cls = error_class(MPI_Reduce_local(in, inout, 2, type, op));
    const bool written = write(pipe_ends[1], &cls, sizeof cls) == sizeof cls;
    _exit(written ? 0 : 1);
  }
  close(pipe_ends[1]);
  int cls = MPI_ERR_OP;
  if (read(pipe_ends[0], &cls, sizeof cls) != sizeof cls) cls = MPI_ERR_OP;
  close(pipe_ends[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return cls;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mpich_op_table OUTPUT\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  std::string rows = "// Generated by tools/mpich_op_table from the MPICH this build uses.\n";
  rows += "// {op, datatype, error class of MPI_Reduce_local}\n#define SHIM_REDUCTIONS \\\n";
  for (const auto& [op, op_name] : kReductions) {
    for (const auto& [type, type_name] : kTypes) {
      if (type == MPI_DATATYPE_NULL) continue;
      const int cls = reduction_class(op, type);
      if (cls < 0) return 1;
      rows += "  {" + std::string(op_name) + ", " + type_name + ", " + std::to_string(cls) + "}, \\\n";
    }
  }
  rows += "\n// {datatype, error class of MPI_Compare_and_swap}\n#define SHIM_COMPARE_AND_SWAP \\\n";
  alignas(64) unsigned char memory[256] = {};
  alignas(64) unsigned char origin[256] = {};
  MPI_Win window = MPI_WIN_NULL;
  MPI_Win_create(memory, sizeof memory, 1, MPI_INFO_NULL, MPI_COMM_SELF, &window);
  MPI_Win_set_errhandler(window, MPI_ERRORS_RETURN);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, window);
  for (const auto& [type, type_name] : kTypes) {
    if (type == MPI_DATATYPE_NULL) continue;
    const int cls = error_class(MPI_Compare_and_swap(origin, origin + 64, origin + 128, type, 0, 0, window));
    rows += "  {" + std::string(type_name) + ", " + std::to_string(cls) + "}, \\\n";
  }
  MPI_Win_unlock(0, window);
  MPI_Win_free(&window);
  MPI_Finalize();
  rows += "\n";
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) return 1;
  const bool written = std::fputs(rows.c_str(), out) >= 0;
  return std::fclose(out) == 0 && written ? 0 : 1;
}
