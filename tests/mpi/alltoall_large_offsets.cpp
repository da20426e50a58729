// Byte offsets beyond 2^31: every offset and length in shim is 64-bit.
//
//   --sparse  blocks whose extent exceeds 2^31 bytes while holding little
//             data: datatypes with huge extents over untouched, lazily mapped
//             memory. Cheap enough for every test run.
//   --dense   2 ranks exchanging blocks of 2^27 doubles (1 GiB) through
//             MPI_Alltoall_c: buffers of 2 GiB. The slow test; run once.
//
// Every hierarchical algorithm is forced in turn; results are checked against
// values computed independently (a PMPI reference would double the memory).
#include <mpi.h>
#include <shim/shim.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tests/mpi/checker.hpp"

namespace {

// Address space reserved, not committed: only touched pages cost memory.
// Buffers written whole may ask for transparent huge pages, which fault in
// 2 MiB at a time (sparse ones must not: each touch would commit 2 MiB).
class LazyBuffer {
 public:
  enum class Pages { small, huge };
  explicit LazyBuffer(std::size_t bytes, Pages pages = Pages::small) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
    if (data_ != nullptr && pages == Pages::huge) madvise(data_, bytes, MADV_HUGEPAGE);
  }
  LazyBuffer(const LazyBuffer&) = delete;
  LazyBuffer& operator=(const LazyBuffer&) = delete;
  ~LazyBuffer() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  unsigned char* data() const { return data_; }

 private:
  std::size_t bytes_;
  unsigned char* data_;
};

double value(int source, int dest, std::int64_t i) {
  // Exactly representable: below 2^53.
  return static_cast<double>((std::int64_t{source} * 4096 + dest) * (std::int64_t{1} << 32) + i);
}

constexpr shim_alltoall_algorithm kForced[] = {SHIM_ALLTOALL_SA, SHIM_ALLTOALL_RD, SHIM_ALLTOALL_LEADER,
                                               SHIM_ALLTOALL_LINEAR, SHIM_ALLTOALL_NODE_PAIRS};
const char* const kNames[] = {"auto", "native", "sa", "rd", "leader", "linear", "node-pairs"};

// Blocks of `count` doubles spaced `stride` bytes apart: block extent is
// count * stride.
void sparse_case(shim::test::Checker& check, std::int64_t stride, std::int64_t count, bool in_place) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Datatype spaced;
  PMPI_Type_create_resized(MPI_DOUBLE, 0, stride, &spaced);
  PMPI_Type_commit(&spaced);
  const std::size_t bytes = static_cast<std::size_t>(size * count * stride);
  const std::string what = "stride " + std::to_string(stride) + " x " + std::to_string(count) +
                           (in_place ? " in place" : "") + " (block extent " + std::to_string(count * stride) + ")";

  for (shim_alltoall_algorithm algorithm : kForced) {
    LazyBuffer send(bytes);
    LazyBuffer recv(bytes);
    check.expect(send.data() != nullptr && recv.data() != nullptr, "reserve address space");
    if (send.data() == nullptr || recv.data() == nullptr) break;
    unsigned char* input = in_place ? recv.data() : send.data();
    for (int d = 0; d < size; ++d) {
      for (std::int64_t i = 0; i < count; ++i) {
        const double v = value(rank, d, i);
        std::memcpy(input + (d * count + i) * stride, &v, sizeof v);
      }
    }
    shim_set_alltoall_algorithm(MPI_COMM_WORLD, algorithm);
    const shim_counters before = [&] {
      shim_counters c{};
      shim_get_alltoall_counters(algorithm, &c);
      return c;
    }();
    const int rc = MPI_Alltoall_c(in_place ? MPI_IN_PLACE : send.data(), count, spaced, recv.data(), count, spaced,
                                  MPI_COMM_WORLD);
    check.expect(rc == MPI_SUCCESS, what + " " + kNames[algorithm] + ": returned " + std::to_string(rc));
    shim_counters after{};
    shim_get_alltoall_counters(algorithm, &after);
    check.expect(after.calls == before.calls + 1, what + " " + kNames[algorithm] + ": algorithm did not run");
    std::int64_t wrong = 0;
    for (int s = 0; s < size; ++s) {
      for (std::int64_t i = 0; i < count; ++i) {
        double got = 0;
        std::memcpy(&got, recv.data() + (s * count + i) * stride, sizeof got);
        wrong += got != value(s, rank, i);
      }
    }
    check.expect(wrong == 0, what + " " + kNames[algorithm] + ": " + std::to_string(wrong) + " wrong elements");
  }
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_AUTO);
  PMPI_Type_free(&spaced);
}

void dense_case(shim::test::Checker& check) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const MPI_Count count = MPI_Count{1} << 27;  // 1 GiB of doubles per block
  const std::size_t elements = static_cast<std::size_t>(count) * size;
  LazyBuffer send(elements * sizeof(double), LazyBuffer::Pages::huge);
  LazyBuffer recv(elements * sizeof(double), LazyBuffer::Pages::huge);
  check.expect(send.data() != nullptr && recv.data() != nullptr, "allocate 2 x " + std::to_string(size) + " GiB");
  if (send.data() == nullptr || recv.data() == nullptr) return;
  auto* out = reinterpret_cast<double*>(send.data());
  auto* in = reinterpret_cast<double*>(recv.data());
  for (int d = 0; d < size; ++d) {
    for (MPI_Count i = 0; i < count; ++i) out[d * count + i] = value(rank, d, i);
  }
  for (shim_alltoall_algorithm algorithm : kForced) {
    std::memset(in, 0, elements * sizeof(double));
    shim_set_alltoall_algorithm(MPI_COMM_WORLD, algorithm);
    const int rc = MPI_Alltoall_c(out, count, MPI_DOUBLE, in, count, MPI_DOUBLE, MPI_COMM_WORLD);
    check.expect(rc == MPI_SUCCESS,
                 std::string("2^27 doubles ") + kNames[algorithm] + ": returned " + std::to_string(rc));
    std::int64_t wrong = 0;
    for (int s = 0; s < size; ++s) {
      for (MPI_Count i = 0; i < count; ++i) wrong += in[s * count + i] != value(s, rank, i);
    }
    check.expect(wrong == 0,
                 std::string("2^27 doubles ") + kNames[algorithm] + ": " + std::to_string(wrong) + " wrong elements");
  }
  shim_set_alltoall_algorithm(MPI_COMM_WORLD, SHIM_ALLTOALL_AUTO);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker check("alltoall_large_offsets");
  const bool dense = argc > 1 && std::strcmp(argv[1], "--dense") == 0;
  if (dense) {
    dense_case(check);
  } else {
    const std::int64_t beyond_int = (std::int64_t{1} << 31) + 8;
    sparse_case(check, beyond_int, 1, false);  // each block's offset is past 2^31
    sparse_case(check, beyond_int, 1, true);
    sparse_case(check, std::int64_t{1} << 20, 4096, false);  // one block spans 4 GiB
  }
  const int status = check.finish();
  MPI_Finalize();
  return status;
}
