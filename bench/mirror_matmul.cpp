// mirror_matmul: is C = A.B of n x n doubles faster with mirrored A, B and C
// (as in Palmer, Nieplocha, Aprà, "Shared Memory Mirroring for Reducing
// Communication Overhead on Commodity Networks", section 4: every process
// computes its share of its node's rows of C into the node's copy, zeroed
// first, then a full or a sparse merge makes C whole everywhere) than with
// distributed arrays (each process fetches the rows of A its block of C
// needs and all of B with MPI_Get + MPI_Win_flush per target, and computes
// its block into its own window memory)?
//
// Checks: a small multiply (--check-n) by every variant against a serial
// reference on every rank; at the timed size every variant's C hashes alike
// in every round, and every node's copy of C alike at the end. Matrices
// hold small multiples of 1/8 and 1/16, so every sum is exact in any order.
#include <shim/shim.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "mirror_common.hpp"

namespace {

constexpr std::string_view kUsage = R"(
  --n N          matrix order of the timed multiply; default 512
  --rounds R     rounds, each running every variant once; default 5
  --check-n N    order of the first, checked multiply (serial reference on every rank); default 45
  --block BYTES  sparse merge block, >= 8; default 4K
)";

enum Variant : int { mirror_full, mirror_sparse, distributed, kVariants };
constexpr std::array<const char*, kVariants> kNames = {"mirror+merge", "mirror+sparse", "distributed"};

double a_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 13 + j * 7) % 17 - 8) / 8; }
double b_value(std::int64_t i, std::int64_t j) { return static_cast<double>((i * 5 + j * 11) % 19 - 9) / 16; }

// C elements [e0, e1) (row-major, n columns) into c[0 .. e1 - e0), from A's
// rows starting at row a_first (in a) and all of B; i-k-j order, so every
// element sums over k ascending in every variant alike.
void multiply(const double* a, std::int64_t a_first, const double* b, double* c, std::int64_t e0, std::int64_t e1,
              std::int64_t n) {
  for (std::int64_t i = e0 / n; e1 > e0 && i <= (e1 - 1) / n; ++i) {
    const std::int64_t j0 = std::max(e0, i * n) - i * n, j1 = std::min(e1, (i + 1) * n) - i * n;
    double* crow = c + (i * n + j0 - e0);
    std::fill(crow, crow + (j1 - j0), 0.0);
    for (std::int64_t k = 0; k < n; ++k) {
      const double aik = a[(i - a_first) * n + k];
      for (std::int64_t j = 0; j < j1 - j0; ++j) crow[j] += aik * b[k * n + j0 + j];
    }
  }
}

class Problem {
 public:
  Problem(std::int64_t n, std::int64_t block_bytes, const bench::MirrorNode& node)
      : n_(n), count_(n * n), block_(block_bytes / 8), node_(node) {
    for (shim_distributed* d : {&a_d_, &b_d_, &c_d_})
      bench::check(shim_distributed_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, d), "shim_distributed_create");
    for (shim_mirror* m : {&a_m_, &b_m_, &c_m_})
      bench::check(shim_mirror_create(count_, MPI_DOUBLE, MPI_COMM_WORLD, m), "shim_mirror_create");
    MPI_Count first = 0, held = 0;
    bench::check(shim_distributed_range(c_d_, bench::rank(), &first, &held), "shim_distributed_range");
    block_range_ = {first, held};
    for (std::int64_t k = 0; k < held; ++k) {
      bench::local_block(a_d_)[k] = a_value((first + k) / n_, (first + k) % n_);
      bench::local_block(b_d_)[k] = b_value((first + k) / n_, (first + k) % n_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    bench::check(shim_mirror_copy_from_distributed(a_m_, a_d_), "shim_mirror_copy_from_distributed");
    bench::check(shim_mirror_copy_from_distributed(b_m_, b_d_), "shim_mirror_copy_from_distributed");
    copy_in_seconds_ = bench::max_over_ranks(MPI_Wtime() - start);
    for (shim_distributed d : {a_d_, b_d_, c_d_})
      bench::check(MPI_Win_lock_all(0, bench::window_of(d)), "MPI_Win_lock_all");
    my_rows_ = bench::share(bench::share({0, n_}, node_.nodes, node_.node), node_.local_size, node_.local_rank);
    direct_ = bench::copy_is_contiguous(a_m_) && bench::copy_is_contiguous(b_m_) && bench::copy_is_contiguous(c_m_);
    if (block_range_.count > 0)
      fetched_rows_ = {block_range_.first / n_, (block_range_.end() - 1) / n_ + 1 - block_range_.first / n_};
    a_fetch_.resize(static_cast<std::size_t>(std::max(fetched_rows_.count, my_rows_.count) * n_));
    b_fetch_.resize(static_cast<std::size_t>(count_));
    c_rows_.resize(static_cast<std::size_t>(my_rows_.count * n_));
    scratch_.resize(static_cast<std::size_t>(count_));
  }
  ~Problem() {
    for (shim_distributed d : {a_d_, b_d_, c_d_}) MPI_Win_unlock_all(bench::window_of(d));
    for (shim_mirror* m : {&a_m_, &b_m_, &c_m_}) shim_mirror_free(m);
    for (shim_distributed* d : {&a_d_, &b_d_, &c_d_}) shim_distributed_free(d);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  // Seconds: total; compute (mirror: zero + multiply; distributed: multiply
  // + completion barrier); communication (the merge, or the gets + flush).
  std::vector<double> run(int v) {
    MPI_Barrier(MPI_COMM_WORLD);
    return v == distributed ? run_distributed() : run_mirrored(v == mirror_sparse);
  }
  // This rank's distributed block of C, as the variant left it.
  const double* result_block(int v) {
    if (v == distributed) return bench::local_block(c_d_);
    if (block_range_.count > 0)
      bench::check(shim_mirror_get(c_m_, block_range_.first, block_range_.count, scratch_.data()), "shim_mirror_get");
    return scratch_.data();
  }
  const double* whole_copy() {  // this node's copy of C
    bench::check(shim_mirror_get(c_m_, 0, count_, scratch_.data()), "shim_mirror_get");
    return scratch_.data();
  }
  bench::Range block() const { return block_range_; }
  bool direct() const { return direct_; }
  double copy_in_seconds() const { return copy_in_seconds_; }

  // Bytes one process moves between processes, from the algorithms (the
  // most over ranks; collective). mirror+merge: the allreduce minimum
  // 2(N-1)/N x slice. mirror+sparse: the other nodes' rows of its slice.
  // distributed: what it fetches from other ranks' blocks.
  std::vector<double> bytes_per_process() const {
    const int nodes = node_.nodes;
    const bench::Range slice =
        node_.local_rank < node_.min_ppn ? bench::share({0, count_}, node_.min_ppn, node_.local_rank) : bench::Range{};
    std::int64_t others = 0;
    for (int m = 0; m < nodes; ++m) {
      const bench::Range rows = bench::share({0, n_}, nodes, m);
      if (m != node_.node)
        others +=
            std::max<std::int64_t>(0, std::min(slice.end(), rows.end() * n_) - std::max(slice.first, rows.first * n_));
    }
    const std::int64_t own_in_rows =
        std::min(block_range_.end(), fetched_rows_.end() * n_) - std::max(block_range_.first, fetched_rows_.first * n_);
    return bench::max_over_ranks(std::vector<double>{
        2.0 * (nodes - 1) / nodes * static_cast<double>(slice.count) * 8, static_cast<double>(others) * 8,
        static_cast<double>(fetched_rows_.count * n_ - std::max<std::int64_t>(0, own_in_rows) + count_ -
                            block_range_.count) *
            8});
  }

 private:
  std::vector<double> run_mirrored(bool sparse) {
    const double start = MPI_Wtime();
    bench::check(shim_mirror_zero(c_m_), "shim_mirror_zero");
    const std::int64_t e0 = my_rows_.first * n_, e1 = my_rows_.end() * n_;
    if (my_rows_.count > 0 && direct_) {
      // The copies are consecutive: read A and B and write C in place.
      multiply(bench::mirror_address(a_m_, e0), my_rows_.first, bench::mirror_address(b_m_, 0),
               bench::mirror_address(c_m_, e0), e0, e1, n_);
    } else if (my_rows_.count > 0) {
      bench::check(shim_mirror_get(a_m_, e0, e1 - e0, a_fetch_.data()), "shim_mirror_get");
      bench::check(shim_mirror_get(b_m_, 0, count_, b_fetch_.data()), "shim_mirror_get");
      multiply(a_fetch_.data(), my_rows_.first, b_fetch_.data(), c_rows_.data(), e0, e1, n_);
      bench::check(shim_mirror_put(c_m_, e0, e1 - e0, c_rows_.data()), "shim_mirror_put");
    }
    const double computed = MPI_Wtime();
    bench::check(sparse ? shim_mirror_merge_sparse(c_m_, block_) : shim_mirror_merge(c_m_), "shim_mirror_merge");
    const double end = MPI_Wtime();
    return {end - start, computed - start, end - computed};
  }

  std::vector<double> run_distributed() {
    const double start = MPI_Wtime();
    bench::Targets a_targets(bench::ranks()), b_targets(bench::ranks());
    if (fetched_rows_.count > 0)
      bench::get_range(a_d_, fetched_rows_.first * n_, fetched_rows_.count * n_, a_fetch_.data(), a_targets);
    bench::get_range(b_d_, 0, count_, b_fetch_.data(), b_targets);
    a_targets.flush(bench::window_of(a_d_));
    b_targets.flush(bench::window_of(b_d_));
    const double fetched = MPI_Wtime();
    multiply(a_fetch_.data(), fetched_rows_.first, b_fetch_.data(), bench::local_block(c_d_), block_range_.first,
             block_range_.end(), n_);
    // Local stores into the window: sync, then everyone is done.
    MPI_Win_sync(bench::window_of(c_d_));
    MPI_Barrier(MPI_COMM_WORLD);
    const double end = MPI_Wtime();
    return {end - start, end - fetched, fetched - start};
  }

  std::int64_t n_, count_, block_;
  bench::MirrorNode node_;
  shim_distributed a_d_ = nullptr, b_d_ = nullptr, c_d_ = nullptr;
  shim_mirror a_m_ = nullptr, b_m_ = nullptr, c_m_ = nullptr;
  bench::Range block_range_, my_rows_, fetched_rows_;
  bool direct_ = false;
  double copy_in_seconds_ = 0;
  std::vector<double> a_fetch_, b_fetch_, c_rows_, scratch_;
};

// Every variant on a small problem against the textbook triple loop: the
// distributed block on every rank, every node's whole mirrored copy.
void check_small(std::int64_t n, std::int64_t block_bytes, const bench::MirrorNode& node) {
  Problem p(n, block_bytes, node);
  std::vector<double> reference(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < n; ++k)
        reference[static_cast<std::size_t>(i * n + j)] += a_value(i, k) * b_value(k, j);
  for (int v = 0; v < kVariants; ++v) {
    p.run(v);
    const double* got = p.result_block(v);
    const std::int64_t first = p.block().first;
    for (std::int64_t k = 0; k < p.block().count; ++k)
      if (got[k] != reference[static_cast<std::size_t>(first + k)])
        bench::fail(std::string("WRONG RESULT (") + kNames[static_cast<std::size_t>(v)] + ", n = " + std::to_string(n) +
                    "): rank " + std::to_string(bench::rank()) + ", C element " + std::to_string(first + k));
    if (v != distributed && !std::equal(reference.begin(), reference.end(), p.whole_copy()))
      bench::fail(std::string("WRONG RESULT (") + kNames[static_cast<std::size_t>(v)] + ", n = " + std::to_string(n) +
                  "): rank " + std::to_string(bench::rank()) + "'s node copy of C");
  }
}

void benchmark(const bench::Args& args) {
  const int n = args.count("--n", 512, 1), rounds = args.count("--rounds", 5, 1),
            check_n = args.count("--check-n", 45, 1);
  const std::int64_t block_bytes = args.bytes("--block", 4 << 10);
  if (block_bytes < 8) throw bench::UsageError("--block must be at least 8 (one double)");
  if (std::int64_t{n} * n > (std::int64_t{1} << 31) - 1) throw bench::UsageError("--n: n * n must fit in an int");
  const bench::Report report(
      args,
      "C = A.B, doubles; mirrored A, B, C (node shares of C's rows, then a full or a sparse merge) vs "
      "distributed A, B, C (MPI_Get of the needed A rows and all of B); variants rotate within each round");
  const bench::MirrorNode node = bench::describe_mirror_nodes(report);
  check_small(check_n, block_bytes, node);
  report.line("checked: n = " + std::to_string(check_n) +
              ", every variant equals a serial reference (distributed "
              "blocks on every rank, every node's mirrored copy)");

  Problem p(n, block_bytes, node);
  std::uint64_t first_hash = 0;
  const bench::Samples seconds = bench::alternate(kVariants, rounds, 3, [&](int v, int round) {
    const std::vector<double> t = p.run(v);
    const std::uint64_t hash = bench::hash_bits(p.result_block(v), p.block().count);
    if (round == 0 && v == 0) first_hash = hash;
    if (hash != first_hash && (round > 0 || v > 0))
      bench::fail(std::string("WRONG RESULT: ") + kNames[static_cast<std::size_t>(v)] + " in round " +
                  std::to_string(round + 1) + " gave another C on rank " + std::to_string(bench::rank()));
    return t;
  });
  const std::uint64_t copy_hash = node.local_rank == 0 ? bench::hash_bits(p.whole_copy(), std::int64_t{n} * n) : 0;
  std::vector<std::uint64_t> hashes(static_cast<std::size_t>(bench::ranks()));
  MPI_Allgather(&copy_hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  hashes.erase(std::remove(hashes.begin(), hashes.end(), 0), hashes.end());
  if (std::adjacent_find(hashes.begin(), hashes.end(), std::not_equal_to<>()) != hashes.end())
    bench::fail("WRONG RESULT: the nodes' copies of C differ");
  const std::vector<double> bytes = p.bytes_per_process();

  report.line("n = " + std::to_string(n) + ": A, B, C " + bench::format_bytes(std::int64_t{n} * n * 8) +
              " each; mirrored access " + (p.direct() ? "in place (consecutive node copies)" : "through get/put") +
              "; one-time copy_from_distributed of A and B: " + bench::us(p.copy_in_seconds() * 1e3) +
              " ms (not in the times)");
  report.line(
      "verified: every variant in every round gave the same C (bit hash of each rank's block), and every "
      "node's copy of C is alike");
  report.columns({"n", "variant", "rounds", "total_ms", "compute_ms", "comm_ms", "gflops", "bytes_per_process"},
                 "Time per multiply, ms (median over rounds of the max over ranks; comm: the merge, or the MPI_Gets); "
                 "bytes per process from the algorithm");
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  for (int v = 0; v < kVariants; ++v)
    report.row({std::to_string(n), kNames[static_cast<std::size_t>(v)], std::to_string(rounds),
                bench::fixed(seconds.median(v, 0) * 1e3, 3), bench::fixed(seconds.median(v, 1) * 1e3, 3),
                bench::fixed(seconds.median(v, 2) * 1e3, 3), bench::fixed(flops / (seconds.median(v, 0) * 1e9), 3),
                bench::fixed(bytes[static_cast<std::size_t>(v)], 0)});
}

}  // namespace

int main(int argc, char** argv) { return bench::run("mirror_matmul", kUsage, argc, argv, benchmark); }
