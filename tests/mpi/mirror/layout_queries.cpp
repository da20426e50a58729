// Scenario: the layout queries (shim_mirror_node, _range, _holder, _address)
// agree with each other and with the layout the test derives itself; each
// holder's block is consecutive memory, blocks do not overlap, and stores
// through the addresses are what every process of the node reads.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/mirror/scenarios.hpp"
#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

template <typename T>
void layout_checks(const Win& w) {
  const Comm& c = w.c;
  const std::string where = w.where + " layout";
  int node = -1, nodes = -1, local_rank = -1, local_size = -1;
  ok(shim_mirror_node(w.m, &node, &nodes, &local_rank, &local_size), where + ": node");
  check->expect(node == c.node && nodes == c.nodes() && local_rank == c.local_rank && local_size == c.local_size(),
                where + ": shim_mirror_node says node " + str(node) + "/" + str(nodes) + " local " + str(local_rank) +
                    "/" + str(local_size) + ", expected " + str(c.node) + "/" + str(c.nodes()) + " local " +
                    str(c.local_rank) + "/" + str(c.local_size()));
  // The rest would read out of bounds: give up everywhere alike.
  int agree = local_size == c.local_size() ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &agree, 1, MPI_INT, MPI_MIN, c.comm);
  if (!agree) return;

  // Ranges: the balanced blocks, tiling [0, count).
  std::vector<Block> held(static_cast<std::size_t>(local_size));
  MPI_Count next = 0;
  for (int l = 0; l < local_size; ++l) {
    Block& b = held[static_cast<std::size_t>(l)];
    ok(shim_mirror_range(w.m, l, &b.first, &b.count), where + ": range");
    const Block want = block_of(w.count, local_size, l);
    check->expect(b.first == want.first && b.count == want.count,
                  where + ": local rank " + str(l) + " holds [" + str(b.first) + ", +" + str(b.count) +
                      "), expected [" + str(want.first) + ", +" + str(want.count) + ")");
    check->expect(b.first == next, where + ": range of local rank " + str(l) + " starts at " + str(b.first) +
                                       ", the previous ended at " + str(next));
    next = b.first + b.count;
  }
  check->expect(next == w.count, where + ": ranges end at " + str(next));

  // Holders are the node's processes in local-rank order; each holder's block
  // is consecutive memory, and no two blocks overlap.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> spans;
  long long bad_holder = 0, bad_address = 0;
  std::string detail;
  for (int l = 0; l < local_size; ++l) {
    const Block b = held[static_cast<std::size_t>(l)];
    if (b.count == 0) continue;
    void* start = nullptr;
    ok(shim_mirror_address(w.m, b.first, &start), where + ": address");
    const auto base = reinterpret_cast<std::uintptr_t>(start);
    spans.emplace_back(base, base + static_cast<std::uintptr_t>(b.count) * sizeof(T));
    const int want_rank = c.members[static_cast<std::size_t>(c.node)][static_cast<std::size_t>(l)];
    for (MPI_Count i = b.first; i < b.end(); ++i) {
      int rank = -1;
      void* address = nullptr;
      shim_mirror_holder(w.m, i, &rank);
      shim_mirror_address(w.m, i, &address);
      if (rank != want_rank && ++bad_holder <= 2)
        detail += " holder(" + str(i) + ") = " + str(rank) + ", expected " + str(want_rank) + ";";
      if (reinterpret_cast<std::uintptr_t>(address) != base + static_cast<std::uintptr_t>(i - b.first) * sizeof(T) &&
          ++bad_address <= 2)
        detail +=
            " address(" + str(i) + ") is not at offset " + str(i - b.first) + " of local rank " + str(l) + "'s block;";
    }
  }
  check->expect(bad_holder == 0 && bad_address == 0,
                where + ": " + str(bad_holder) + " wrong holders, " + str(bad_address) + " wrong addresses:" + detail);
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k)
    check->expect(spans[k - 1].second <= spans[k].first, where + ": two holders' blocks overlap in memory");

  // Stores through the addresses are what every process of the node reads.
  const Block mine = held[static_cast<std::size_t>(local_rank)];
  for (MPI_Count i = mine.first; i < mine.end(); ++i) {
    void* address = nullptr;
    shim_mirror_address(w.m, i, &address);
    *static_cast<T*>(address) = make<T>(node_value(c.node, i) * 7);
  }
  ok(shim_mirror_sync(w.m), where + ": sync");
  expect_mirror<T>(
      w.m, w.count, [&](MPI_Count i) { return make<T>(node_value(c.node, i) * 7); },
      where + " stores through shim_mirror_address");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// The element types mirror_matrix.cpp runs this with.
template void layout_checks<int>(const Win&);
template void layout_checks<double>(const Win&);

}  // namespace shim::test::mirror
