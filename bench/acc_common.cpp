#include "acc_common.hpp"

#include <shim/shim.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace bench {

namespace {

double value_of(std::int64_t i) { return static_cast<double>(1 + i % 7); }

volatile double g_sink = 0;

double now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Computes for `seconds` without any MPI call.
void compute_for(double seconds) {
  const double end = now() + seconds;
  double x = g_sink + 1.0;
  do {
    for (int k = 0; k < 4096; ++k) x = x * 1.0000001 + 1e-9;
  } while (now() < end);
  g_sink = x;
}

const std::vector<std::int64_t>& origin_target_sizes(const std::vector<std::int64_t>& sizes) {
  if (sizes.front() < 8) throw UsageError("sizes must be at least 8 bytes (one double)");
  if (ranks() < 2) throw UsageError("needs 2 ranks or more (rank 0 the origin, the last rank the target)");
  return sizes;
}

}  // namespace

PathWindows::PathWindows(const Args& args, const std::vector<std::int64_t>& sizes)
    : PathWindows(args.choose("--paths", kAccumulatePaths, "native,caller,owner"), origin_target_sizes(sizes).back(),
                  args.choose("--memory", kWindowMemory, "allocate").at(0)) {}

PathWindows::PathWindows(const std::vector<std::string>& paths, std::int64_t bytes, const std::string& memory)
    : paths_(paths), elements_(bytes / 8) {
  for (const std::string& path : paths) {
    MPI_Info info = MPI_INFO_NULL;
    check(MPI_Info_create(&info), "MPI_Info_create");
    check(MPI_Info_set(info, "shim_accumulate", path.c_str()), "MPI_Info_set");
    void* base = nullptr;
    windows_.push_back(MPI_WIN_NULL);
    if (memory == "create") {
      memory_.push_back(page_aligned(static_cast<std::size_t>(bytes)));
      base = memory_.back().get();
      std::memset(base, 0, static_cast<std::size_t>(bytes));
      check(MPI_Win_create(base, static_cast<MPI_Aint>(bytes), sizeof(double), info, MPI_COMM_WORLD, &windows_.back()),
            "MPI_Win_create");
    } else {
      check(
          MPI_Win_allocate(static_cast<MPI_Aint>(bytes), sizeof(double), info, MPI_COMM_WORLD, &base, &windows_.back()),
          "MPI_Win_allocate");
    }
    bases_.push_back(static_cast<double*>(base));
    MPI_Info_free(&info);
  }
}

PathWindows::~PathWindows() {
  for (MPI_Win& window : windows_) MPI_Win_free(&window);
}

std::string PathWindows::made_by() const { return memory_.empty() ? "MPI_Win_allocate" : "MPI_Win_create"; }

std::string PathWindows::reported() const {
  std::string text;
  for (std::size_t p = 0; p < paths_.size(); ++p) {
    char taken[32] = {};
    check(shim_win_accumulate_path(windows_[p], taken, sizeof taken), "shim_win_accumulate_path");
    text += (text.empty() ? "" : ", ") + paths_[p] + " -> " + taken;
  }
  return text;
}

void first_use(const PathWindows& w) {
  for (int p = 0; p < static_cast<int>(w.paths().size()); ++p) {
    accumulate_batch(w, p, 1, 10, 1);
    accumulate_batch(w, p, std::min<std::int64_t>(8192, w.elements()), 2, 64);
  }
}

const double* origin_data(std::int64_t elements) {
  static Buffer buffer;
  static std::int64_t filled = 0;
  if (elements > filled) {
    buffer = page_aligned(static_cast<std::size_t>(elements) * sizeof(double));
    for (filled = 0; filled < elements; ++filled) reinterpret_cast<double*>(buffer.get())[filled] = value_of(filled);
  }
  return reinterpret_cast<const double*>(buffer.get());
}

Batch accumulate_batch(const PathWindows& w, int path, std::int64_t elements, int flushes, int per_flush, double cap,
                       double busy, Completion completion, Bystanders bystanders) {
  const MPI_Win win = w.window(path);
  const int n = static_cast<int>(elements);
  // The target zeroes [0, n], n past the range: it must stay 0.
  const std::int64_t checked = std::min(elements + 1, w.elements());
  if (rank() == target_rank()) {
    check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target_rank(), 0, win), "MPI_Win_lock");
    std::memset(w.base(path), 0, static_cast<std::size_t>(checked) * sizeof(double));
    check(MPI_Win_unlock(target_rank(), win), "MPI_Win_unlock");
  }
  const double* data = origin_data(elements);
  MPI_Barrier(MPI_COMM_WORLD);
  Batch b;
  MPI_Request done = MPI_REQUEST_NULL;
  if (rank() == kOrigin) {
    const bool epoch_each = completion == Completion::unlock;
    auto lock = [&] { check(MPI_Win_lock(MPI_LOCK_SHARED, target_rank(), 0, win), "MPI_Win_lock"); };
    auto unlock = [&] { check(MPI_Win_unlock(target_rank(), win), "MPI_Win_unlock"); };
    if (!epoch_each) lock();
    const double start = MPI_Wtime();
    while (b.flushes < flushes && (cap <= 0 || MPI_Wtime() - start <= cap)) {
      if (epoch_each) lock();
      for (int k = 0; k < per_flush; ++k)
        check(MPI_Accumulate(data, n, MPI_DOUBLE, target_rank(), 0, n, MPI_DOUBLE, MPI_SUM, win), "MPI_Accumulate");
      if (epoch_each) {
        unlock();
      } else {
        check(MPI_Win_flush(target_rank(), win), "MPI_Win_flush");
      }
      ++b.flushes;
    }
    b.seconds = MPI_Wtime() - start;
    if (!epoch_each) unlock();
  }
  MPI_Ibarrier(MPI_COMM_WORLD, &done);
  if (rank() == target_rank() && busy > 0) {
    for (int finished = 0; !finished; MPI_Test(&done, &finished, MPI_STATUS_IGNORE)) compute_for(busy);
  } else if (rank() != kOrigin && bystanders == Bystanders::asleep) {
    for (int finished = 0; !finished; MPI_Test(&done, &finished, MPI_STATUS_IGNORE)) {
      const timespec millisecond{0, 1000000};
      nanosleep(&millisecond, nullptr);
    }
  } else {
    // Waiting inside MPI drives its progress engine, as OSU's target does in
    // MPI_Barrier.
    MPI_Wait(&done, MPI_STATUS_IGNORE);
  }
  MPI_Bcast(&b.flushes, 1, MPI_INT, kOrigin, MPI_COMM_WORLD);
  if (rank() != target_rank()) return b;
  const std::int64_t accumulates = static_cast<std::int64_t>(b.flushes) * per_flush;
  check(MPI_Win_lock(MPI_LOCK_SHARED, target_rank(), 0, win), "MPI_Win_lock");
  for (std::int64_t i = 0; i < checked; ++i)
    if (w.base(path)[i] != (i < elements ? static_cast<double>(accumulates) * value_of(i) : 0.0))
      fail("WRONG RESULT in the target's window on the '" + w.paths()[static_cast<std::size_t>(path)] +
           "' window: element " + std::to_string(i) + " after " + std::to_string(accumulates) + " accumulates of " +
           format_bytes(elements * 8));
  check(MPI_Win_unlock(target_rank(), win), "MPI_Win_unlock");
  return b;
}

}  // namespace bench
