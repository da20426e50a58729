// window_churn: how long does creating and freeing a window take, as Global
// Arrays does it (one MPI_Win_allocate per array, freed with the array):
// MPICH's own (PMPI_Win_allocate, which shim does not see) against shim's
// MPI_Win_allocate, by size per rank and by the info keys codes pass.
// Variants alternate round by round; time per MPI_Win_allocate +
// MPI_Win_free, max over ranks.
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

constexpr std::string_view kUsage = R"(      (any number of ranks; timings mean something at 2 ranks per machine)
  --min BYTES    smallest window per rank; default 8
  --max BYTES    largest window per rank; default 1M
  --sizes LIST   comma-separated sizes instead of --min/--max
  --infos LIST   info sets, from none,alloc_shm,same_disp_unit,accumulate_ops; default all four
  --windows N    windows created and freed per batch; default 50
  --rounds R     rounds per size and info set; default 7
  --touch        write every byte of a window once before freeing it (what a code that uses it pays)
)";

const std::map<std::string, std::vector<std::pair<const char*, const char*>>> kInfos = {
    {"none", {}},
    {"alloc_shm", {{"alloc_shm", "true"}}},
    {"same_disp_unit", {{"same_disp_unit", "true"}}},
    {"accumulate_ops", {{"accumulate_ops", "same_op"}}},
};

// Seconds per create + free, this rank's.
double churn(bool native, std::int64_t bytes, MPI_Info info, int windows, bool touch) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < windows; ++i) {
    unsigned char* base = nullptr;
    MPI_Win win = MPI_WIN_NULL;
    bench::check(native ? PMPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &base, &win)
                        : MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &base, &win),
                 "MPI_Win_allocate");
    if (touch) {
      for (std::int64_t b = 0; b < bytes; b += 64) base[b] = static_cast<unsigned char>(i);
    }
    bench::check(native ? PMPI_Win_free(&win) : MPI_Win_free(&win), "MPI_Win_free");
  }
  return (MPI_Wtime() - start) / windows;
}

void benchmark(const bench::Args& args) {
  const auto sizes = args.sizes(8, std::int64_t{1} << 20);
  const int windows = args.count("--windows", 50, 1), rounds = args.count("--rounds", 7, 1);
  const bool touch = args.flag("--touch");
  const auto infos = args.choose("--infos", {"none", "alloc_shm", "same_disp_unit", "accumulate_ops"},
                                 "none,alloc_shm,same_disp_unit,accumulate_ops");
  const bench::Report report(args, std::string("MPI_Win_allocate + MPI_Win_free on MPI_COMM_WORLD") +
                                       (touch ? ", every byte written once" : "") +
                                       ": MPICH's own (PMPI_*) against shim's, alternating in one run");
  report.line("method: " + std::to_string(windows) + " windows created and freed per batch, " + std::to_string(rounds) +
              " rounds per size and info set (rotating order, one warm-up batch each); median over rounds of the "
              "max over ranks; shim_vs_native = median of same-round ratios");
  report.columns({"bytes", "info", "native_us", "shim_us", "shim_vs_native"},
                 "Window create + free, us per window (max over ranks)");
  for (const std::string& name : infos) {
    MPI_Info info = MPI_INFO_NULL;
    if (!kInfos.at(name).empty()) {
      MPI_Info_create(&info);
      for (const auto& [key, value] : kInfos.at(name)) MPI_Info_set(info, key, value);
    }
    for (const std::int64_t bytes : sizes) {
      for (const bool native : {true, false}) churn(native, bytes, info, 1, touch);
      const bench::Samples s = bench::alternate(2, rounds, 1, [&](int variant, int) {
        return std::vector<double>{churn(variant == 0, bytes, info, windows, touch) * 1e6};
      });
      report.row({std::to_string(bytes), name, bench::us(s.median(0)), bench::us(s.median(1)),
                  bench::fixed(s.ratio(1, 0), 3)});
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  }
}

}  // namespace

int main(int argc, char** argv) { return bench::run("window_churn", kUsage, argc, argv, benchmark); }
