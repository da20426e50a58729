// MPI_Put and MPI_Get beside the accumulate family, to the same elements,
// with no remote completion between them: MPI leaves the outcome undefined,
// MPICH orders them, and programs rely on it (ARMCI-MPI under
// ARMCI_RMA_ATOMICITY=0 issues put, flush_local, accumulate, flush_local,
// get, flush). On native, caller and owner windows, made by MPI_Win_allocate
// and MPI_Win_create, every origin runs four sequences on its own elements
// of every target (its own node's and, on virtual nodes, the others'), in a
// lock_all epoch and in a shared lock epoch, each several times:
//   put, flush_local, accumulate, flush_local, get, flush: the get sees both;
//   accumulate, get, flush: the get sees the accumulate;
//   accumulate, put, flush: the put's values stay;
//   put, fetch-and-op, flush: the fetch sees the put.
// Every fetched element and, after the epoch, every target element is
// compared with the value computed here. The put, get and accumulate calls
// rotate through their variants (request-based, large-count, derived target
// datatypes: reversed indexed blocks, a resized vector).
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

constexpr int kRun = 12;         // elements per access
constexpr int kSequences = 4;    // regions per origin, one per sequence
constexpr int kSpan = 2 * kRun;  // elements per region: room for the stride-2 shape
constexpr int kRegion = kSequences * kSpan;
constexpr int kRounds = 6;

shim::test::Checker* check = nullptr;

long initial(int round, int target, int i) { return 1000000L * round + 1000L * target + i; }
long put_value(int round, int origin, int i) { return 500000L + 10000L * origin + 100L * round + i; }
long acc_value(int origin, int i) { return 7L * (origin + 1) + i; }

// The target datatypes a variant names: kRun longs contiguous, as indexed
// blocks in reverse order, or every other element (a long resized to the
// extent of two, kRun of them).
struct TargetShape {
  MPI_Datatype type = MPI_LONG;
  int count = kRun;
  std::vector<int> element;  // target element of packed position k, from the region's start
};

class Shapes {
 public:
  Shapes() {
    shapes_.push_back({MPI_LONG, kRun, linear(1)});
    std::vector<int> reversed(kRun);
    for (int k = 0; k < kRun; ++k) reversed[static_cast<std::size_t>(k)] = kRun - 1 - k;
    MPI_Datatype indexed = MPI_DATATYPE_NULL;
    MPI_Type_create_indexed_block(kRun, 1, reversed.data(), MPI_LONG, &indexed);
    MPI_Type_commit(&indexed);
    shapes_.push_back({indexed, 1, reversed});
    MPI_Datatype every_other = MPI_DATATYPE_NULL;
    MPI_Type_create_resized(MPI_LONG, 0, 2 * sizeof(long), &every_other);
    MPI_Type_commit(&every_other);
    shapes_.push_back({every_other, kRun, linear(2)});
  }
  ~Shapes() {
    for (TargetShape& shape : shapes_)
      if (shape.type != MPI_LONG) MPI_Type_free(&shape.type);
  }
  Shapes(const Shapes&) = delete;
  Shapes& operator=(const Shapes&) = delete;
  const TargetShape& at(int variant) const { return shapes_[static_cast<std::size_t>(variant) % shapes_.size()]; }

 private:
  static std::vector<int> linear(int stride) {
    std::vector<int> out(kRun);
    for (int k = 0; k < kRun; ++k) out[static_cast<std::size_t>(k)] = stride * k;
    return out;
  }
  std::vector<TargetShape> shapes_;
};

void put(const long* data, const TargetShape& shape, int target, MPI_Aint disp, int variant, MPI_Win win,
         const std::string& where) {
  switch (variant % 3) {
    case 0:
      check->expect_success(MPI_Put(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win), where);
      break;
    case 1: {
      MPI_Request request = MPI_REQUEST_NULL;
      check->expect_success(MPI_Rput(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win, &request),
                            where);
      MPI_Wait(&request, MPI_STATUS_IGNORE);  // local completion only
      break;
    }
    default:
      check->expect_success(MPI_Put_c(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win), where);
  }
}

void get(long* data, const TargetShape& shape, int target, MPI_Aint disp, int variant, MPI_Win win,
         MPI_Request& request, const std::string& where) {
  switch (variant % 3) {
    case 0:
      check->expect_success(MPI_Get(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win), where);
      break;
    case 1:
      check->expect_success(MPI_Rget(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win, &request),
                            where);
      break;
    default:
      check->expect_success(MPI_Get_c(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, win), where);
  }
}

void accumulate(const long* data, const TargetShape& shape, int target, MPI_Aint disp, int variant, MPI_Win win,
                const std::string& where) {
  std::vector<long> ignored(kRun);
  switch (variant % 3) {
    case 0:
      check->expect_success(MPI_Accumulate(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, MPI_SUM, win),
                            where);
      break;
    case 1: {
      MPI_Request request = MPI_REQUEST_NULL;
      check->expect_success(
          MPI_Raccumulate(data, kRun, MPI_LONG, target, disp, shape.count, shape.type, MPI_SUM, win, &request), where);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      break;
    }
    default: {
      // The result arrives by the request's completion, while `ignored` lives.
      MPI_Request request = MPI_REQUEST_NULL;
      check->expect_success(MPI_Rget_accumulate(data, kRun, MPI_LONG, ignored.data(), kRun, MPI_LONG, target, disp,
                                                shape.count, shape.type, MPI_SUM, win, &request),
                            where);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  }
}

enum class Epoch { lock_all, lock_shared };

struct Run {
  const char* path;
  bool create;  // MPI_Win_create, else MPI_Win_allocate
  Epoch epoch;
  std::string name() const {
    return std::string(path) + (create ? " MPI_Win_create" : " MPI_Win_allocate") + " window, " +
           (epoch == Epoch::lock_all ? "lock_all" : "shared lock") + " epoch";
  }
};

// Element `i` of origin `o`'s region `sequence` in a target's window.
int element(int origin, int sequence, int i) { return origin * kRegion + sequence * kSpan + i; }

void run(const Run& r, const Shapes& shapes, int rank, int size) {
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "shim_accumulate", r.path);
  const int elements = size * kRegion;
  std::vector<long> memory;
  long* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  if (r.create) {
    memory.resize(static_cast<std::size_t>(elements));
    base = memory.data();
    MPI_Win_create(base, elements * static_cast<MPI_Aint>(sizeof(long)), sizeof(long), info, MPI_COMM_WORLD, &win);
  } else {
    MPI_Win_allocate(elements * static_cast<MPI_Aint>(sizeof(long)), sizeof(long), info, MPI_COMM_WORLD, &base, &win);
  }
  MPI_Info_free(&info);

  for (int round = 0; round < kRounds; ++round) {
    for (int shift = 0; shift < size; ++shift) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
      for (int i = 0; i < elements; ++i) base[i] = initial(round, rank, i);
      MPI_Win_unlock(rank, win);
      MPI_Barrier(MPI_COMM_WORLD);

      const int target = (rank + shift) % size;
      const int variant = round + shift;
      const std::string where = r.name() + ", round " + std::to_string(round) + ", rank " + std::to_string(rank) +
                                " -> " + std::to_string(target);
      std::vector<long> puts(kRun), accs(kRun), fetched(kRun, -1), after_acc(kRun, -1), fop_result(kRun, -1);
      for (int k = 0; k < kRun; ++k) {
        puts[static_cast<std::size_t>(k)] = put_value(round, rank, k);
        accs[static_cast<std::size_t>(k)] = acc_value(rank, k);
      }
      const TargetShape& shape = shapes.at(variant);
      auto disp = [&](int sequence) { return static_cast<MPI_Aint>(element(rank, sequence, 0)); };
      if (r.epoch == Epoch::lock_all) {
        MPI_Win_lock_all(0, win);
      } else {
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
      }
      MPI_Request request = MPI_REQUEST_NULL;
      // 0: put, flush_local, accumulate, flush_local, get, flush.
      put(puts.data(), shape, target, disp(0), variant, win, where + ": put before an accumulate");
      MPI_Win_flush_local(target, win);
      accumulate(accs.data(), shape, target, disp(0), variant + 1, win, where + ": accumulate after a put");
      MPI_Win_flush_local(target, win);
      get(fetched.data(), shape, target, disp(0), variant, win, request, where + ": get after both");
      // 1: accumulate, get (no flush between).
      accumulate(accs.data(), shape, target, disp(1), variant, win, where + ": accumulate before a get");
      MPI_Request second = MPI_REQUEST_NULL;
      get(after_acc.data(), shape, target, disp(1), variant + 1, win, second, where + ": get after an accumulate");
      // 2: accumulate, put (no flush between).
      accumulate(accs.data(), shape, target, disp(2), variant + 2, win, where + ": accumulate before a put");
      put(puts.data(), shape, target, disp(2), variant + 1, win, where + ": put after an accumulate");
      // 3: put, fetch-and-op on each element (no flush between).
      put(puts.data(), shape, target, disp(3), variant + 2, win, where + ": put before fetch-and-op");
      const long one = 1;
      for (int k = 0; k < kRun; ++k) {
        const MPI_Aint at = disp(3) + shape.element[static_cast<std::size_t>(k)];
        check->expect_success(
            MPI_Fetch_and_op(&one, &fop_result[static_cast<std::size_t>(k)], MPI_LONG, target, at, MPI_SUM, win),
            where + ": fetch-and-op after a put");
      }
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      MPI_Wait(&second, MPI_STATUS_IGNORE);
      if (r.epoch == Epoch::lock_all) {
        MPI_Win_unlock_all(win);
      } else {
        MPI_Win_unlock(target, win);
      }

      // What each fetch must have seen, element by element.
      std::vector<long> want_fetched(kRun), want_after_acc(kRun);
      for (std::size_t k = 0; k < kRun; ++k) {
        want_fetched[k] = puts[k] + accs[k];
        want_after_acc[k] = initial(round, target, element(rank, 1, shape.element[k])) + accs[k];
      }
      struct Fetch {
        const std::vector<long>& values;
        const std::vector<long>& expected;
        const char* what;
      };
      for (const Fetch& fetch : {Fetch{fetched, want_fetched, "get after put and accumulate"},
                                 Fetch{after_acc, want_after_acc, "get after an accumulate"},
                                 Fetch{fop_result, puts, "fetch-and-op after a put"}}) {
        check->expect_elements(
            kRun, [&](std::size_t k) { return fetch.values[k] == fetch.expected[k]; },
            [&](std::size_t k) {
              return "element " + std::to_string(k) + " is " + std::to_string(fetch.values[k]) + ", expected " +
                     std::to_string(fetch.expected[k]);
            },
            where + ": " + fetch.what);
      }
      MPI_Barrier(MPI_COMM_WORLD);

      // Each origin's four regions at this rank, written by origin (rank - shift).
      const int origin = (rank - shift + size) % size;
      std::vector<long> expected(static_cast<std::size_t>(elements));
      for (int i = 0; i < elements; ++i) expected[static_cast<std::size_t>(i)] = initial(round, rank, i);
      for (int k = 0; k < kRun; ++k) {
        const int e = shape.element[static_cast<std::size_t>(k)];
        const long p = put_value(round, origin, k), a = acc_value(origin, k);
        expected[static_cast<std::size_t>(element(origin, 0, e))] = p + a;
        expected[static_cast<std::size_t>(element(origin, 1, e))] += a;
        expected[static_cast<std::size_t>(element(origin, 2, e))] = p;
        expected[static_cast<std::size_t>(element(origin, 3, e))] = p + 1;
      }
      MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
      check->expect_elements(
          static_cast<std::size_t>(elements), [&](std::size_t i) { return base[i] == expected[i]; },
          [&](std::size_t i) {
            return "element " + std::to_string(i) + " is " + std::to_string(base[i]) + ", expected " +
                   std::to_string(expected[i]);
          },
          r.name() + ", round " + std::to_string(round) + ": rank " + std::to_string(rank) + "'s window after rank " +
              std::to_string(origin) + "'s sequences");
      MPI_Win_unlock(rank, win);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("put_accumulate_order");
  check = &checker;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    const Shapes shapes;
    for (const char* path : {"native", "caller", "owner"})
      for (const bool create : {false, true})
        for (const Epoch epoch : {Epoch::lock_all, Epoch::lock_shared}) run({path, create, epoch}, shapes, rank, size);
  }
  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
