// mirror_matmul: C = A.B of n x n doubles with mirrored A, B and C (seed
// 000 §4: every process computes its share of C's rows, its node's share
// divided over the node's processes, into its node's copy of C, zeroed
// first, reading A and B from its node's copies; then a merge makes C whole
// everywhere) against a distributed algorithm (A, B and C distributed
// arrays; each process fetches the rows of A its block of C needs and all
// of B with MPI_Get and MPI_Win_flush per target, passive target, and computes its block of C into its
// own window memory). Both variants of the mirrored multiply are timed: with
// a full merge and with a sparse merge (C's copies are zero outside each
// node's rows). `--help` lists the flags.
//
// All variants run in one run, rotating within each round; time = median
// over rounds of the max over ranks. Checks: first a small multiply (--check-n)
// by every variant against a serial reference on every rank, then at the
// timed size a hash of every variant's C in every round (each rank hashes
// its distributed block's elements) must equal the others', and at the end
// every node's whole copy of C must hash alike. The matrices hold small
// multiples of 1/8 and 1/16, so every sum is exact in any order.
#include <mpi.h>
#include <shim/mirror.h>
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "mirror_common.hpp"

namespace {

using bench::check;
using bench::fail;
using bench::format_bytes;
using bench::median;
using bench::UsageError;

constexpr std::string_view kUsage =
    "usage: mirror_matmul [options]\n"
    "  --n N          matrix order of the timed multiply; default 512\n"
    "  --rounds R     rounds; each runs every variant once; default 5\n"
    "  --check-n N    order of the first, checked multiply (serial reference on every rank); default 45\n"
    "  --block BYTES  sparse merge block, a power of two >= 8; default 4K\n"
    "  --csv          CSV rows instead of the table; '#' lines are comments\n"
    "  --help         print this and exit\n";

struct Options {
  int n = 512;
  int rounds = 5;
  int check_n = 45;
  std::int64_t block_bytes = 4 << 10;
  bool csv = false;
};

Options parse(int argc, char** argv, bool& help) {
  const mbench::Args args(argc, argv, {"--n", "--rounds", "--check-n", "--block"}, {"--csv"});
  help = args.flag("--help");
  Options o;
  o.n = args.count("--n", o.n, 1);
  o.rounds = args.count("--rounds", o.rounds, 1);
  o.check_n = args.count("--check-n", o.check_n, 1);
  o.block_bytes = args.bytes("--block", o.block_bytes);
  o.csv = args.flag("--csv");
  if (o.block_bytes < 8) throw UsageError("--block must be at least 8 (one double)");
  if (static_cast<std::int64_t>(o.n) * o.n > (std::int64_t{1} << 31) - 1)
    throw UsageError("--n: n * n must fit in an int (MPI_Get counts)");
  return o;
}

enum Variant : int { mirror_full, mirror_sparse, distributed, kVariants };
constexpr std::array<const char*, kVariants> kNames = {"mirror+merge", "mirror+sparse", "distributed"};

double a_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 13 + j * 7) % 17 - 8) / 8; }
double b_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 5 + j * 11) % 19 - 9) / 16; }

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
};

Range share(Range whole, int parts, int part) {
  const std::int64_t base = whole.count / parts, extra = whole.count % parts;
  return {whole.first + part * base + std::min<std::int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

// C elements [e0, e1) (row-major, n columns) into c[0 .. e1 - e0), from A's
// rows starting at row a_first (in a) and all of B. i-k-j order: each
// element sums over k ascending, in every variant alike.
void multiply(const double* a, std::int64_t a_first, const double* b, double* c, std::int64_t e0, std::int64_t e1,
              std::int64_t n) {
  if (e1 <= e0) return;
  for (std::int64_t i = e0 / n; i <= (e1 - 1) / n; ++i) {
    const std::int64_t j0 = std::max(e0, i * n) - i * n;
    const std::int64_t j1 = std::min(e1, (i + 1) * n) - i * n;
    double* crow = c + (i * n + j0 - e0);
    std::fill(crow, crow + (j1 - j0), 0.0);
    const double* arow = a + (i - a_first) * n;
    for (std::int64_t k = 0; k < n; ++k) {
      const double aik = arow[k];
      const double* brow = b + k * n + j0;
      for (std::int64_t j = 0; j < j1 - j0; ++j) crow[j] += aik * brow[j];
    }
  }
}

struct Times {
  double total = 0;
  double compute = 0;  // mirror: zero + multiply; distributed: multiply + completion barrier
  double comm = 0;     // mirror: merge; distributed: the MPI_Gets and their flush
};

class Problem {
 public:
  Problem(std::int64_t n, std::int64_t block_bytes) : n_(n), count_(n * n), block_(block_bytes / 8) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    for (shim_distributed* d : {&a_d_, &b_d_, &c_d_})
      check(shim_distributed_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, d), "shim_distributed_create");
    for (shim_mirror* m : {&a_m_, &b_m_, &c_m_})
      check(shim_mirror_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, m), "shim_mirror_create");
    check(shim_mirror_node(c_m_, &node_, &nodes_, &local_rank_, &local_size_), "shim_mirror_node");
    MPI_Allreduce(&local_size_, &min_ppn_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Count first = 0, held = 0;
    check(shim_distributed_range(c_d_, rank_, &first, &held), "shim_distributed_range");
    block_range_ = {first, held};
    for (auto [array, f] : {std::pair{a_d_, &a_value}, std::pair{b_d_, &b_value}}) {
      double* mine = mbench::local_block(array);
      for (std::int64_t k = 0; k < held; ++k) mine[k] = f((first + k) / n_, (first + k) % n_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    check(shim_mirror_copy_from_distributed(a_m_, a_d_), "shim_mirror_copy_from_distributed");
    check(shim_mirror_copy_from_distributed(b_m_, b_d_), "shim_mirror_copy_from_distributed");
    copy_in_seconds_ = mbench::max_over_ranks(MPI_Wtime() - start);
    for (shim_distributed d : {a_d_, b_d_, c_d_}) check(MPI_Win_lock_all(0, window(d)), "MPI_Win_lock_all");

    my_rows_ = share(share({0, n_}, nodes_, node_), local_size_, local_rank_);
    direct_ = mbench::copy_is_contiguous(a_m_) && mbench::copy_is_contiguous(b_m_) && mbench::copy_is_contiguous(c_m_);
    if (!direct_) {
      a_rows_.resize(static_cast<std::size_t>(my_rows_.count * n_));
      c_rows_.resize(static_cast<std::size_t>(my_rows_.count * n_));
      b_all_.resize(static_cast<std::size_t>(count_));
    }
    if (block_range_.count > 0) {
      const std::int64_t r0 = block_range_.first / n_, r1 = (block_range_.end() - 1) / n_ + 1;
      fetched_rows_ = {r0, r1 - r0};
    }
    a_fetch_.resize(static_cast<std::size_t>(fetched_rows_.count * n_));
    b_fetch_.resize(static_cast<std::size_t>(count_));
    scratch_.resize(static_cast<std::size_t>(std::max(block_range_.count, count_)));
  }

  ~Problem() {
    for (shim_distributed d : {a_d_, b_d_, c_d_}) MPI_Win_unlock_all(window(d));
    for (shim_mirror* m : {&a_m_, &b_m_, &c_m_}) shim_mirror_free(m);
    for (shim_distributed* d : {&a_d_, &b_d_, &c_d_}) shim_distributed_free(d);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  Times run(Variant v) {
    MPI_Barrier(MPI_COMM_WORLD);
    return v == distributed ? run_distributed() : run_mirrored(v == mirror_sparse);
  }

  // This rank's distributed block of C, as the variant left it.
  const double* result_block(Variant v) {
    if (v == distributed) return mbench::local_block(c_d_);
    if (block_range_.count > 0)
      check(shim_mirror_get(c_m_, block_range_.first, block_range_.count, scratch_.data()), "shim_mirror_get");
    return scratch_.data();
  }
  // This node's whole copy of C.
  const double* whole_copy() {
    check(shim_mirror_get(c_m_, 0, count_, scratch_.data()), "shim_mirror_get");
    return scratch_.data();
  }

  std::int64_t n() const { return n_; }
  Range block() const { return block_range_; }
  int nodes() const { return nodes_; }
  int local_rank() const { return local_rank_; }
  int min_ppn() const { return min_ppn_; }
  bool direct() const { return direct_; }
  double copy_in_seconds() const { return copy_in_seconds_; }

  // Bytes one process moves between processes, from the algorithms (the
  // most over ranks; collective). distributed: what it fetches from other
  // ranks' blocks. mirror+merge: the allreduce minimum 2(N-1)/N x slice.
  // mirror+sparse: the other nodes' rows of its slice (block ids aside).
  std::array<double, kVariants> bytes_per_process() const {
    std::array<double, kVariants> bytes{};
    const Range slice = local_rank_ < min_ppn_ ? share({0, count_}, min_ppn_, local_rank_) : Range{};
    bytes[mirror_full] = 2.0 * (nodes_ - 1) / nodes_ * static_cast<double>(slice.count) * 8;
    std::int64_t others = 0;
    for (int m = 0; m < nodes_; ++m) {
      if (m == node_) continue;
      const Range rows = share({0, n_}, nodes_, m);
      const std::int64_t lo = std::max(slice.first, rows.first * n_), hi = std::min(slice.end(), rows.end() * n_);
      others += std::max<std::int64_t>(0, hi - lo);
    }
    bytes[mirror_sparse] = static_cast<double>(others) * 8;
    const std::int64_t own_in_rows =
        std::min(block_range_.end(), fetched_rows_.end() * n_) - std::max(block_range_.first, fetched_rows_.first * n_);
    bytes[distributed] =
        static_cast<double>(fetched_rows_.count * n_ - std::max<std::int64_t>(0, own_in_rows) + count_ - block_range_.count) * 8;
    std::vector<double> all(bytes.begin(), bytes.end());
    all = mbench::max_over_ranks(all);
    std::copy(all.begin(), all.end(), bytes.begin());
    return bytes;
  }

 private:
  static MPI_Win window(shim_distributed d) {
    MPI_Win w = MPI_WIN_NULL;
    check(shim_distributed_window(d, &w), "shim_distributed_window");
    return w;
  }
  double* address(shim_mirror m, std::int64_t index) const {
    void* p = nullptr;
    check(shim_mirror_address(m, index, &p), "shim_mirror_address");
    return static_cast<double*>(p);
  }

  Times run_mirrored(bool sparse) {
    Times t;
    const double start = MPI_Wtime();
    check(shim_mirror_zero(c_m_), "shim_mirror_zero");
    const std::int64_t e0 = my_rows_.first * n_, e1 = my_rows_.end() * n_;
    if (my_rows_.count > 0) {
      if (direct_) {
        // The copies are consecutive: read A and B and write C in place.
        multiply(address(a_m_, e0), my_rows_.first, address(b_m_, 0), address(c_m_, e0), e0, e1, n_);
      } else {
        check(shim_mirror_get(a_m_, e0, e1 - e0, a_rows_.data()), "shim_mirror_get");
        check(shim_mirror_get(b_m_, 0, count_, b_all_.data()), "shim_mirror_get");
        multiply(a_rows_.data(), my_rows_.first, b_all_.data(), c_rows_.data(), e0, e1, n_);
        check(shim_mirror_put(c_m_, e0, e1 - e0, c_rows_.data()), "shim_mirror_put");
      }
    }
    const double computed = MPI_Wtime();
    if (sparse) {
      check(shim_mirror_merge_sparse(c_m_, block_), "shim_mirror_merge_sparse");
    } else {
      check(shim_mirror_merge(c_m_), "shim_mirror_merge");
    }
    const double end = MPI_Wtime();
    return {end - start, computed - start, end - computed};
  }

  Times run_distributed() {
    const double start = MPI_Wtime();
    const MPI_Win a_win = window(a_d_), b_win = window(b_d_), c_win = window(c_d_);
    mbench::Targets a_targets(size_), b_targets(size_);
    if (fetched_rows_.count > 0)
      mbench::get_range(a_d_, a_win, fetched_rows_.first * n_, fetched_rows_.count * n_, a_fetch_.data(), a_targets);
    mbench::get_range(b_d_, b_win, 0, count_, b_fetch_.data(), b_targets);
    a_targets.flush(a_win);
    b_targets.flush(b_win);
    const double fetched = MPI_Wtime();
    multiply(a_fetch_.data(), fetched_rows_.first, b_fetch_.data(), mbench::local_block(c_d_), block_range_.first,
             block_range_.end(), n_);
    // Local stores into the window: sync, then everyone is done.
    MPI_Win_sync(c_win);
    MPI_Barrier(MPI_COMM_WORLD);
    const double end = MPI_Wtime();
    return {end - start, end - fetched, fetched - start};
  }

  std::int64_t n_, count_, block_;
  int rank_ = 0, size_ = 1, node_ = 0, nodes_ = 1, local_rank_ = 0, local_size_ = 1, min_ppn_ = 1;
  shim_distributed a_d_ = nullptr, b_d_ = nullptr, c_d_ = nullptr;
  shim_mirror a_m_ = nullptr, b_m_ = nullptr, c_m_ = nullptr;
  Range block_range_, my_rows_, fetched_rows_;
  bool direct_ = false;
  double copy_in_seconds_ = 0;
  std::vector<double> a_rows_, b_all_, c_rows_, a_fetch_, b_fetch_, scratch_;
};

// Every variant on a small problem against a serial reference: the
// distributed block on every rank, every node's whole mirrored copy.
void check_small(const Options& o, int rank) {
  Problem p(o.check_n, o.block_bytes);
  const std::int64_t n = p.n();
  std::vector<double> a(static_cast<std::size_t>(n * n)), b(a.size()), reference(a.size());
  for (std::int64_t i = 0; i < n * n; ++i) {
    a[static_cast<std::size_t>(i)] = a_value(i / n, i % n);
    b[static_cast<std::size_t>(i)] = b_value(i / n, i % n);
  }
  // The textbook triple loop, independent of multiply().
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < n; ++k) sum += a[static_cast<std::size_t>(i * n + k)] * b[static_cast<std::size_t>(k * n + j)];
      reference[static_cast<std::size_t>(i * n + j)] = sum;
    }
  for (int v = 0; v < kVariants; ++v) {
    p.run(static_cast<Variant>(v));
    const Range block = p.block();
    const double* got = p.result_block(static_cast<Variant>(v));
    for (std::int64_t k = 0; k < block.count; ++k) {
      if (got[k] != reference[static_cast<std::size_t>(block.first + k)])
        fail(std::string("WRONG RESULT (") + kNames[static_cast<std::size_t>(v)] + ", n = " + std::to_string(n) +
             "): rank " + std::to_string(rank) + ", C element " + std::to_string(block.first + k) + " is " +
             std::to_string(got[k]) + ", the serial reference " +
             std::to_string(reference[static_cast<std::size_t>(block.first + k)]));
    }
    if (v != distributed) {
      const double* copy = p.whole_copy();
      for (std::int64_t i = 0; i < n * n; ++i)
        if (copy[i] != reference[static_cast<std::size_t>(i)])
          fail(std::string("WRONG RESULT (") + kNames[static_cast<std::size_t>(v)] + ", n = " + std::to_string(n) +
               "): rank " + std::to_string(rank) + "'s node copy of C, element " + std::to_string(i) + " is " +
               std::to_string(copy[i]) + ", the serial reference " + std::to_string(reference[static_cast<std::size_t>(i)]));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_program_name("mirror_matmul");
  MPI_Init(&argc, &argv);
  Options o;
  if (const auto status = mbench::parse_or_exit("mirror_matmul", kUsage, argc, argv, o, parse)) return *status;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const mbench::Machine machine = mbench::describe_machine();
  if (rank == 0) {
    mbench::print_line(o.csv, std::string("mirror_matmul (shim ") + shim_version() +
                                  "): C = A.B, doubles; mirrored A, B, C (node shares of C's rows, zero C, compute "
                                  "into the node copy, then a full or a sparse merge) vs distributed A, B, C (MPI_Get "
                                  "of the needed A rows and all of B, passive target; each rank computes its own "
                                  "block of C); the variants rotate within each round");
    mbench::print_machine(machine, o.csv);
    std::fflush(stdout);
  }

  check_small(o, rank);
  if (rank == 0)
    mbench::print_line(o.csv, "checked: n = " + std::to_string(o.check_n) +
                                  ", every variant equals the serial reference (distributed blocks on every rank, "
                                  "every node's mirrored copy)");

  {  // p is freed before MPI_Finalize
  Problem p(o.n, o.block_bytes);
  const std::int64_t n = p.n();
  const auto rounds = static_cast<std::size_t>(o.rounds);
  std::vector<double> seconds(3 * kVariants * rounds);  // total, compute, comm
  std::uint64_t reference_hash = 0;
  bool have_hash = false;
  for (std::size_t round = 0; round < rounds; ++round) {
    for (int k = 0; k < kVariants; ++k) {
      const auto v = static_cast<Variant>((k + static_cast<int>(round)) % kVariants);
      const Times t = p.run(v);
      const std::size_t at = (static_cast<std::size_t>(v) * rounds + round) * 3;
      seconds[at] = t.total;
      seconds[at + 1] = t.compute;
      seconds[at + 2] = t.comm;
      const std::uint64_t hash = mbench::hash_bits(p.result_block(v), p.block().count);
      if (!have_hash) {
        reference_hash = hash;
        have_hash = true;
      } else if (hash != reference_hash) {
        fail(std::string("WRONG RESULT: ") + kNames[static_cast<std::size_t>(v)] + " in round " +
             std::to_string(round + 1) + " gave another C on rank " + std::to_string(rank) +
             "'s block than the first variant run");
      }
    }
  }
  // Every node's whole copy alike (the last mirrored variant's C).
  {
    const std::uint64_t mine = p.local_rank() == 0 ? mbench::hash_bits(p.whole_copy(), n * n) : 0;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
    std::vector<int> leaders(static_cast<std::size_t>(size));
    const int leader = p.local_rank() == 0 ? 1 : 0;
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::uint64_t first = 0;
    bool seen = false;
    for (int r = 0; r < size; ++r) {
      if (!leaders[static_cast<std::size_t>(r)]) continue;
      if (seen && all[static_cast<std::size_t>(r)] != first) fail("WRONG RESULT: the nodes' copies of C differ");
      first = all[static_cast<std::size_t>(r)];
      seen = true;
    }
  }
  seconds = mbench::max_over_ranks(seconds);
  const std::array<double, kVariants> bytes = p.bytes_per_process();

  if (rank == 0) {
    const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    std::array<std::array<double, 3>, kVariants> med{};
    for (int v = 0; v < kVariants; ++v)
      for (int f = 0; f < 3; ++f) {
        std::vector<double> values;
        for (std::size_t r = 0; r < rounds; ++r)
          values.push_back(seconds[(static_cast<std::size_t>(v) * rounds + r) * 3 + static_cast<std::size_t>(f)] * 1e3);
        med[static_cast<std::size_t>(v)][static_cast<std::size_t>(f)] = median(values);
      }
    mbench::print_line(o.csv, "n = " + std::to_string(n) + ": A, B, C " + format_bytes(n * n * 8) + " each (" +
                                  std::to_string(n * n) + " doubles); " + std::to_string(p.nodes()) + " node" +
                                  (p.nodes() == 1 ? "" : "s") + ", " + std::to_string(p.min_ppn()) +
                                  " merging process(es) per node; mirrored access " +
                                  (p.direct() ? "in place (the node copies are consecutive)"
                                              : "through shim_mirror_get/put (copies in pieces)") +
                                  "; one-time copy_from_distributed of A and B: " +
                                  mbench::format_us(p.copy_in_seconds() * 1e3) + " ms (not in the times)");
    mbench::print_line(o.csv, "verified: every variant in every round gave the same C (bit hash of each rank's "
                              "block), and every node's copy of C is alike");
    if (o.csv) {
      std::printf("n,variant,rounds,total_ms,compute_ms,comm_ms,gflops,bytes_per_process\n");
      for (int v = 0; v < kVariants; ++v) {
        const auto& m = med[static_cast<std::size_t>(v)];
        std::printf("%" PRId64 ",%s,%d,%.3f,%.3f,%.3f,%.3f,%.0f\n", n, kNames[static_cast<std::size_t>(v)], o.rounds,
                    m[0], m[1], m[2], flops / (m[0] * 1e6), bytes[static_cast<std::size_t>(v)]);
      }
    } else {
      std::printf("\nTime per multiply, ms (median over %d rounds of the max over ranks; the parts are medians of "
                  "their own maxima)\n",
                  o.rounds);
      std::printf("%-14s %10s %12s %16s %9s %18s\n", "variant", "total", "compute", "merge | fetch", "GFLOP/s",
                  "bytes per process");
      for (int v = 0; v < kVariants; ++v) {
        const auto& m = med[static_cast<std::size_t>(v)];
        std::printf("%-14s %10.2f %12.2f %16.2f %9.2f %18s\n", kNames[static_cast<std::size_t>(v)], m[0], m[1], m[2],
                    flops / (m[0] * 1e6), bench::format_number(bytes[static_cast<std::size_t>(v)]).c_str());
      }
      std::printf("compute: mirrored = zero C + multiply into the node copy; distributed = multiply + MPI_Barrier "
                  "(C complete). merge | fetch: the merge, or the MPI_Gets + flush. bytes per process (most over "
                  "ranks, from the algorithm): mirror+merge = allreduce minimum 2(N-1)/N x slice, mirror+sparse = "
                  "other nodes' rows in the slice, distributed = A rows and B elements fetched from other ranks\n");
    }
    std::fflush(stdout);
  }
  }
  MPI_Finalize();
  return 0;
}
