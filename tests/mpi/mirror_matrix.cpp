// Mirrored windows (include/shim/mirror.h), in the manner of Global Arrays'
// mirrored-array tests: every node writes node-dependent values, merges, and
// every process reads back the sum over nodes; patch and sparse merges match
// a full merge; copies to and from distributed arrays round-trip exactly
// (checked through the distributed array's own MPI window); concurrent local
// accumulates are exact; the layout queries agree with each other; odd and
// empty sizes, sub-communicators and every documented error.
//
// Every expected value is computed here, from the layout the test derives
// itself (SHIM_NODE_SIZE's virtual nodes of world ranks, or processor names),
// never from shim's answers. Element values are small integers mapped
// linearly into each type (integers wrap modulo 2^bits, floating-point sums
// stay exact), so every sum is predictable to the bit.
#include <mpi.h>
#include <shim/mirror.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tests/mpi/checker.hpp"

namespace {

shim::test::Checker* check = nullptr;
int world_rank = 0;
int world_size = 1;

std::string str(long long v) { return std::to_string(v); }

void ok(int rc, const std::string& where) { check->expect_success(rc, where); }

int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

std::string class_name(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    default: return "error class " + str(cls);
  }
}

void expect_class(int rc, int want, const std::string& where) {
  const int got = error_class(rc);
  check->expect(got == want, where + ": error class " + class_name(got) + ", expected " + class_name(want));
}

// ---- element arithmetic, independent of shim -------------------------------

using shim::test::is_complex;
using shim::test::show;

// A linear map from integers to elements: make(a) + make(b) == make(a + b)
// and scalar(s) * make(a) == make(s * a) exactly (integers wrap modulo
// 2^bits, as C++20 conversions do; floating point holds these small integers
// exactly), so every sum is predicted by a sum of long longs.
template <typename T>
T make(long long v) {
  if constexpr (is_complex<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(v), static_cast<R>(-2 * v));
  } else {
    return static_cast<T>(v);
  }
}

// A scale factor: real, so that it commutes with make() for complex types.
template <typename T>
T scalar(long long s) {
  if constexpr (is_complex<T>::value) {
    return T(static_cast<typename T::value_type>(s), 0);
  } else {
    return static_cast<T>(s);
  }
}

// Element by element: got[k] is element first + k.
template <typename T, typename Want>
void expect_elements(const std::vector<T>& got, MPI_Count first, Want want, const std::string& where) {
  check->expect_elements(
      got.size(), [&](std::size_t k) { return got[k] == want(first + static_cast<MPI_Count>(k)); },
      [&](std::size_t k) {
        const MPI_Count i = first + static_cast<MPI_Count>(k);
        return "element " + str(i) + ": got " + show(got[k]) + ", expected " + show(want(i));
      },
      where);
}

// ---- the layout, as the test derives it -------------------------------------

struct Block {
  MPI_Count first = 0;
  MPI_Count count = 0;
  MPI_Count end() const { return first + count; }
};

// n elements in `parts` consecutive balanced blocks, the first n % parts
// one element longer.
Block block_of(MPI_Count n, int parts, int part) {
  const MPI_Count base = n / parts, extra = n % parts;
  return {part * base + std::min<MPI_Count>(part, extra), base + (part < extra ? 1 : 0)};
}

int owner_of(MPI_Count n, int parts, MPI_Count index) {
  for (int p = 0; p < parts; ++p)
    if (index < block_of(n, parts, p).end()) return p;
  return -1;
}

int node_size_setting() {
  const char* k = std::getenv("SHIM_NODE_SIZE");
  return k != nullptr && *k != '\0' ? std::atoi(k) : 0;
}

// A communicator and its nodes: virtual nodes of SHIM_NODE_SIZE consecutive
// world ranks, or the processes with the same processor name; numbered in
// order of their lowest rank in this communicator, local ranks ascending.
struct Comm {
  std::string name;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  int node = 0;
  int local_rank = 0;
  std::vector<int> node_of;               // of each comm rank
  std::vector<std::vector<int>> members;  // comm ranks of each node

  int nodes() const { return static_cast<int>(members.size()); }
  int local_size() const { return static_cast<int>(members[static_cast<std::size_t>(node)].size()); }
  int local_size_of(int n) const { return static_cast<int>(members[static_cast<std::size_t>(n)].size()); }
  int local_rank_of(int r) const {
    const auto& m = members[static_cast<std::size_t>(node_of[static_cast<std::size_t>(r)])];
    return static_cast<int>(std::find(m.begin(), m.end(), r) - m.begin());
  }
};

Comm describe(const std::string& name, MPI_Comm comm) {
  Comm c;
  c.name = name;
  c.comm = comm;
  PMPI_Comm_rank(comm, &c.rank);
  PMPI_Comm_size(comm, &c.size);
  std::vector<long long> key(static_cast<std::size_t>(c.size));
  if (const int k = node_size_setting(); k > 0) {
    const long long mine = world_rank / k;
    PMPI_Allgather(&mine, 1, MPI_LONG_LONG, key.data(), 1, MPI_LONG_LONG, comm);
  } else {
    char mine[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    PMPI_Get_processor_name(mine, &length);
    std::vector<char> all(static_cast<std::size_t>(c.size) * MPI_MAX_PROCESSOR_NAME);
    PMPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
    for (int r = 0; r < c.size; ++r) {
      key[static_cast<std::size_t>(r)] = r;
      for (int s = 0; s < r; ++s)
        if (std::strncmp(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                         &all[static_cast<std::size_t>(s) * MPI_MAX_PROCESSOR_NAME], MPI_MAX_PROCESSOR_NAME) == 0) {
          key[static_cast<std::size_t>(r)] = s;
          break;
        }
    }
  }
  std::vector<long long> seen;
  for (int r = 0; r < c.size; ++r) {
    const auto it = std::find(seen.begin(), seen.end(), key[static_cast<std::size_t>(r)]);
    const int n = static_cast<int>(it - seen.begin());
    if (it == seen.end()) {
      seen.push_back(key[static_cast<std::size_t>(r)]);
      c.members.emplace_back();
    }
    c.node_of.push_back(n);
    c.members[static_cast<std::size_t>(n)].push_back(r);
  }
  c.node = c.node_of[static_cast<std::size_t>(c.rank)];
  c.local_rank = c.local_rank_of(c.rank);
  return c;
}

// ---- values -----------------------------------------------------------------

// What node n writes at element i before a merge: negative values for the
// signed types, wrap-around in an unsigned char as soon as two nodes add.
long long node_value(int node, MPI_Count i) { return (node + 1) * 100LL - static_cast<long long>(i % 173); }
long long merged_value(int nodes, MPI_Count i) {
  long long sum = 0;
  for (int n = 0; n < nodes; ++n) sum += node_value(n, i);
  return sum;
}

template <typename T>
std::vector<T> mirror_get(shim_mirror m, MPI_Count first, MPI_Count count, const std::string& where) {
  std::vector<T> out(static_cast<std::size_t>(count), make<T>(-12345));
  ok(shim_mirror_get(m, first, count, out.data()), where + ": get");
  return out;
}

template <typename T, typename Value>
void mirror_put(shim_mirror m, MPI_Count first, MPI_Count count, Value value, const std::string& where) {
  std::vector<T> in(static_cast<std::size_t>(count));
  for (MPI_Count k = 0; k < count; ++k) in[static_cast<std::size_t>(k)] = make<T>(value(first + k));
  ok(shim_mirror_put(m, first, count, in.data()), where + ": put");
}

// Each process writes the block it holds (as the test computes it).
template <typename T, typename Value>
void put_own_block(const Comm& c, shim_mirror m, MPI_Count count, Value value, const std::string& where) {
  const Block mine = block_of(count, c.local_size(), c.local_rank);
  mirror_put<T>(m, mine.first, mine.count, value, where + " own block");
}

template <typename T, typename Want>
void expect_mirror(shim_mirror m, MPI_Count count, Want want, const std::string& where) {
  expect_elements(mirror_get<T>(m, 0, count, where), 0, want, where);
}

shim_mirror create_mirror(MPI_Count count, MPI_Datatype type, const Comm& c, const std::string& where) {
  shim_mirror m = nullptr;
  ok(shim_mirror_create(count, type, c.comm, &m), where + ": shim_mirror_create");
  check->expect(m != nullptr, where + ": shim_mirror_create gave a null handle");
  return m;
}

void free_mirror(shim_mirror& m, const std::string& where) {
  ok(shim_mirror_free(&m), where + ": shim_mirror_free");
  check->expect(m == nullptr, where + ": shim_mirror_free left the handle set");
}

// A window under test: its communicator, handle, size and datatype, and the
// label its failures carry.
struct Win {
  const Comm& c;
  shim_mirror m;
  MPI_Count count;
  MPI_Datatype type;
  std::string where;
};

Win open_window(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count) {
  const std::string where = c.name + " " + type_name + " x" + str(count);
  return {c, create_mirror(count, type, c, where), count, type, where};
}

void close_window(Win& w) { free_mirror(w.m, w.where); }

// ---- 1. merge sums the node copies --------------------------------------------

template <typename T>
void fresh_checks(const Win& w) {
  MPI_Count got_count = -1;
  MPI_Datatype got_type = MPI_DATATYPE_NULL;
  ok(shim_mirror_size(w.m, &got_count, &got_type), w.where + ": size");
  check->expect(got_count == w.count && got_type == w.type,
                w.where + ": shim_mirror_size says " + str(got_count) + " elements of another datatype");
  expect_mirror<T>(w.m, w.count, [](MPI_Count) { return make<T>(0); }, w.where + " new window reads zero");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

template <typename T>
void merge_rounds(const Win& w, bool both) {
  const Comm& c = w.c;
  // Round 1: each process writes its own block.
  put_own_block<T>(c, w.m, w.count, [&](MPI_Count i) { return node_value(c.node, i); }, w.where);
  ok(shim_mirror_merge(w.m), w.where + ": merge");
  expect_mirror<T>(w.m, w.count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
                   w.where + " merged (each holder wrote its block)");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
  if (!both) return;
  // Round 2: the node's last process writes the whole copy, others' blocks too.
  if (c.local_rank == c.local_size() - 1)
    mirror_put<T>(w.m, 0, w.count, [&](MPI_Count i) { return 3 * node_value(c.node, i + 1); }, w.where);
  ok(shim_mirror_merge(w.m), w.where + ": merge");
  expect_mirror<T>(w.m, w.count, [&](MPI_Count i) { return make<T>(3 * merged_value(c.nodes(), i + 1)); },
                   w.where + " merged (one process wrote the whole copy)");
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

// ---- 5. layout queries agree with each other and with the test's layout --------

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
        detail += " address(" + str(i) + ") is not at offset " + str(i - b.first) + " of local rank " + str(l) +
                  "'s block;";
    }
  }
  check->expect(bad_holder == 0 && bad_address == 0, where + ": " + str(bad_holder) + " wrong holders, " +
                                                         str(bad_address) + " wrong addresses:" + detail);
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
  expect_mirror<T>(w.m, w.count, [&](MPI_Count i) { return make<T>(node_value(c.node, i) * 7); },
                   where + " stores through shim_mirror_address");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// ---- 5. local get/put/acc on any range ------------------------------------------

template <typename T>
void local_access(const Win& w) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " local access";
  const int ls = c.local_size();
  ok(shim_mirror_zero(w.m), where + ": zero");
  // The node's copy as the test expects it, updated round by round.
  std::vector<long long> model(static_cast<std::size_t>(count), 0);
  // Rounds of disjoint ranges; range k of a round is written by local rank
  // (k + 1) % ls, mostly not its holder, while the others write theirs.
  std::vector<std::vector<Block>> rounds(3);
  auto add = [&](std::vector<Block>& round, Block r) {
    const bool fits = r.first >= 0 && r.count > 0 && r.end() <= count;
    const bool disjoint = std::none_of(round.begin(), round.end(),
                                       [&](const Block& o) { return r.first < o.end() && o.first < r.end(); });
    if (fits && disjoint) round.push_back(r);
  };
  for (int l = 1; l < ls; ++l) add(rounds[0], {block_of(count, ls, l).first - 2, 4});  // across each boundary
  add(rounds[0], {0, 1});                                                               // single elements
  add(rounds[0], {count - 1, 1});
  if (ls > 1) add(rounds[0], {block_of(count, ls, 1).first + 3, 1});
  add(rounds[1], {0, count});                                   // every block
  add(rounds[2], {1, count / 2});                               // two halves
  add(rounds[2], {count / 2 + 1, count - count / 2 - 2});

  for (std::size_t round = 0; round < rounds.size(); ++round) {
    const long long s = static_cast<long long>(round) + 1;
    const std::string what = where + " round " + str(s);
    auto put_value = [&](MPI_Count i) { return (s * 1000 + i % 5000) * (c.node + 1); };
    auto acc_value = [&](MPI_Count i) { return i % 11 - 5 + s; };
    const long long scale = s % 2 == 0 ? -3 : 2;
    const auto& ranges = rounds[round];
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      const Block r = ranges[k];
      if (static_cast<int>((k + 1) % static_cast<std::size_t>(ls)) == c.local_rank) {
        mirror_put<T>(w.m, r.first, r.count, put_value, what);
        std::vector<T> more(static_cast<std::size_t>(r.count));
        for (MPI_Count j = 0; j < r.count; ++j) more[static_cast<std::size_t>(j)] = make<T>(acc_value(r.first + j));
        const T factor = scalar<T>(scale);
        ok(shim_mirror_acc(w.m, r.first, r.count, more.data(), &factor), what + ": acc");
      }
      for (MPI_Count i = r.first; i < r.end(); ++i)
        model[static_cast<std::size_t>(i)] = put_value(i) + scale * acc_value(i);
    }
    // Empty ranges anywhere, by everyone, without a buffer: no effect.
    for (const MPI_Count at : {MPI_Count{0}, count / 2, count}) {
      ok(shim_mirror_get(w.m, at, 0, nullptr), what + ": get of 0 elements");
      ok(shim_mirror_put(w.m, at, 0, nullptr), what + ": put of 0 elements");
      ok(shim_mirror_acc(w.m, at, 0, nullptr, nullptr), what + ": acc of 0 elements");
    }
    ok(shim_mirror_sync(w.m), what + ": sync");
    for (const Block& r : ranges)
      expect_elements(mirror_get<T>(w.m, r.first, r.count, what), r.first,
                      [&](MPI_Count i) { return make<T>(put_value(i) + scale * acc_value(i)); },
                      what + " [" + str(r.first) + ", +" + str(r.count) + ") read back");
    expect_mirror<T>(w.m, count, [&](MPI_Count i) { return make<T>(model[static_cast<std::size_t>(i)]); },
                     what + " whole copy");
    ok(shim_mirror_sync(w.m), what + ": sync");
  }
  // zero clears every copy.
  ok(shim_mirror_zero(w.m), where + ": zero");
  expect_mirror<T>(w.m, count, [](MPI_Count) { return make<T>(0); }, where + " after zero");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// ---- 4. concurrent accumulates into the same elements ----------------------------

// The range and values comm rank r accumulates in iteration `it`: every
// process of a node hits the same elements, through different ranges.
Block acc_range(MPI_Count count, int rank, int it) {
  const MPI_Count margin = std::min<MPI_Count>(300, count / 4);
  const MPI_Count first = margin == 0 ? 0 : (it * 37 + rank * 11) % margin;
  const MPI_Count end = count - (margin == 0 ? 0 : (it * 53 + rank * 5) % margin);
  return {first, end - first};
}
long long acc_value(int rank, int it, MPI_Count i) { return 1 + rank % 5 + (i + it) % 3; }
long long acc_scale(int it) { return it % 7 == 6 ? -1 : 1 + it % 3; }

template <typename T>
void acc_rounds(const Win& w, int iterations) {
  const Comm& c = w.c;
  const std::string where = w.where + " concurrent acc x" + str(iterations);
  // What each node's copy must hold: every process of the node, every iteration.
  std::vector<std::vector<long long>> node_sum(static_cast<std::size_t>(c.nodes()),
                                               std::vector<long long>(static_cast<std::size_t>(w.count), 0));
  for (int r = 0; r < c.size; ++r) {
    auto& sum = node_sum[static_cast<std::size_t>(c.node_of[static_cast<std::size_t>(r)])];
    for (int it = 0; it < iterations; ++it) {
      const Block b = acc_range(w.count, r, it);
      for (MPI_Count i = b.first; i < b.end(); ++i)
        sum[static_cast<std::size_t>(i)] += acc_scale(it) * acc_value(r, it, i);
    }
  }
  ok(shim_mirror_zero(w.m), where + ": zero");  // and start together, to collide
  std::vector<T> buffer;
  for (int it = 0; it < iterations; ++it) {
    const Block b = acc_range(w.count, c.rank, it);
    buffer.resize(static_cast<std::size_t>(b.count));
    for (MPI_Count k = 0; k < b.count; ++k)
      buffer[static_cast<std::size_t>(k)] = make<T>(acc_value(c.rank, it, b.first + k));
    const T scale = scalar<T>(acc_scale(it));
    // Scale 1 both ways: explicit, and NULL.
    const bool implicit_one = acc_scale(it) == 1 && it % 2 == 0;
    const int rc = shim_mirror_acc(w.m, b.first, b.count, buffer.data(), implicit_one ? nullptr : &scale);
    if (rc != MPI_SUCCESS) ok(rc, where + ": acc iteration " + str(it));
  }
  ok(shim_mirror_sync(w.m), where + ": sync");
  const auto& mine = node_sum[static_cast<std::size_t>(c.node)];
  expect_mirror<T>(w.m, w.count, [&](MPI_Count i) { return make<T>(mine[static_cast<std::size_t>(i)]); },
                   where + ": node copy before merge");
  ok(shim_mirror_merge(w.m), where + ": merge");
  expect_mirror<T>(w.m, w.count,
                   [&](MPI_Count i) {
                     long long total = 0;
                     for (const auto& sum : node_sum) total += sum[static_cast<std::size_t>(i)];
                     return make<T>(total);
                   },
                   where + ": merged");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// ---- 2. patch and sparse merges ---------------------------------------------------

template <typename T>
void patch_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  std::vector<Block> patches = {{0, count}};
  if (count > 0) patches.push_back({count - 1, 1});
  if (count > 2) patches.push_back({count / 3, count / 3 + 1});
  if (thorough) {
    patches.push_back({0, 0});
    if (count > 0) patches.push_back({count, 0});
    if (count > 1) patches.push_back({0, 1});
    // Across holders' blocks (the patch is collective: the same everywhere).
    const Block b = block_of(count, c.local_size_of(0), 1);
    if (c.local_size_of(0) > 1 && b.first >= 2 && b.first + 3 <= count) patches.push_back({b.first - 2, 5});
  }
  int round = 0;
  for (const Block& p : patches) {
    ++round;
    const std::string what = w.where + " merge_patch [" + str(p.first) + ", +" + str(p.count) + ")";
    auto mine = [&](MPI_Count i) { return node_value(c.node, i + round); };
    put_own_block<T>(c, w.m, count, mine, what);
    ok(shim_mirror_merge_patch(w.m, p.first, p.count), what + ": merge_patch");
    expect_mirror<T>(w.m, count,
                     [&](MPI_Count i) {
                       return make<T>(i >= p.first && i < p.end() ? merged_value(c.nodes(), i + round) : mine(i));
                     },
                     what + ": sum inside the patch, this node's values outside");
    ok(shim_mirror_sync(w.m), what + ": sync");
  }
}

// Node n writes only its own stretches of 37 elements, plus every 101st
// element, which all nodes write; the rest stays zero.
long long sparse_value(const Comm& c, int node, MPI_Count i) {
  const bool own = (i / 37) % c.nodes() == node;
  const bool shared = i % 101 == 0;
  return own || shared ? node_value(node, i) + 1000 : 0;
}

template <typename T>
void sparse_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " merge_sparse";
  auto want = [&](MPI_Count i) {
    long long sum = 0;
    for (int n = 0; n < c.nodes(); ++n) sum += sparse_value(c, n, i);
    return make<T>(sum);
  };
  auto write_mine = [&](const std::string& what) {
    ok(shim_mirror_zero(w.m), what + ": zero");
    put_own_block<T>(c, w.m, count, [&](MPI_Count i) { return sparse_value(c, c.node, i); }, what);
  };
  // The reference: a full merge of the same inputs.
  write_mine(where);
  ok(shim_mirror_merge(w.m), where + ": full merge");
  const std::vector<T> full = mirror_get<T>(w.m, 0, count, where);
  expect_elements(full, 0, want, where + ": full merge");

  // 1, 10 (divides none of the counts here), one block larger than the
  // array; thorough: 64, 2^40 and the largest MPI_Count too.
  std::vector<MPI_Count> blocks = {1};
  if (count > 10) blocks.push_back(10);
  if (thorough && count > 64) blocks.push_back(64);
  blocks.push_back(count + 5);
  if (thorough) blocks.insert(blocks.end(), {MPI_Count{1} << 40, std::numeric_limits<MPI_Count>::max()});
  for (const MPI_Count block : blocks) {
    const std::string what = where + " block " + str(block);
    write_mine(what);
    ok(shim_mirror_merge_sparse(w.m, block), what + ": merge_sparse");
    const std::vector<T> got = mirror_get<T>(w.m, 0, count, what);
    expect_elements(got, 0, want, what);
    expect_elements(got, 0, [&](MPI_Count i) { return full[static_cast<std::size_t>(i)]; },
                    what + ": equals the full merge");
  }
  if (!thorough) return;
  // All nodes zero: stays zero. One node only: its values everywhere.
  ok(shim_mirror_zero(w.m), where + ": zero");
  ok(shim_mirror_merge_sparse(w.m, 16), where + ": merge_sparse of zeros");
  expect_mirror<T>(w.m, count, [](MPI_Count) { return make<T>(0); }, where + " of all-zero copies");
  ok(shim_mirror_sync(w.m), where + ": sync");
  const int lone = c.nodes() - 1;
  if (c.node == lone) put_own_block<T>(c, w.m, count, [&](MPI_Count i) { return node_value(lone, i); }, where);
  ok(shim_mirror_merge_sparse(w.m, 7), where + ": merge_sparse, one node non-zero");
  expect_mirror<T>(w.m, count, [&](MPI_Count i) { return make<T>(node_value(lone, i)); },
                   where + " when only the last node wrote");
  ok(shim_mirror_sync(w.m), where + ": sync");
}

// ---- 3. copies to and from distributed arrays ------------------------------------

shim_distributed create_distributed(MPI_Count count, MPI_Datatype type, MPI_Comm comm, const std::string& where) {
  shim_distributed d = nullptr;
  ok(shim_distributed_create(count, type, comm, &d), where + ": shim_distributed_create");
  check->expect(d != nullptr, where + ": shim_distributed_create gave a null handle");
  return d;
}

void free_distributed(shim_distributed& d, const std::string& where) {
  ok(shim_distributed_free(&d), where + ": shim_distributed_free");
  check->expect(d == nullptr, where + ": shim_distributed_free left the handle set");
}

// Every rank writes the elements i with i % size == rank, wherever they live,
// with MPI_Put in a fence epoch.
template <typename T, typename Value>
void distributed_write(shim_distributed d, MPI_Datatype type, MPI_Comm comm, MPI_Count count, Value value,
                       const std::string& where) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  MPI_Win win = MPI_WIN_NULL;
  ok(shim_distributed_window(d, &win), where + ": window");
  std::vector<T> values;
  for (MPI_Count i = rank; i < count; i += size) values.push_back(make<T>(value(i)));
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  std::size_t k = 0;
  for (MPI_Count i = rank; i < count; i += size, ++k) {
    int owner = -1;
    MPI_Aint displacement = -1;
    ok(shim_distributed_locate(d, i, &owner, &displacement), where + ": locate");
    MPI_Put(&values[k], 1, type, owner, displacement, 1, type, win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

// Every rank reads the whole array with MPI_Get in a lock_all epoch, one get
// per owner (from shim_distributed_locate of the owner's first element), and
// checks range and locate of every element against the balanced blocks.
template <typename T, typename Want>
void expect_distributed(shim_distributed d, MPI_Datatype type, MPI_Comm comm, MPI_Count count, Want want,
                        const std::string& where) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  MPI_Win win = MPI_WIN_NULL;
  ok(shim_distributed_window(d, &win), where + ": window");
  long long bad_layout = 0;
  for (int r = 0; r < size; ++r) {
    Block b;
    shim_distributed_range(d, r, &b.first, &b.count);
    const Block w = block_of(count, size, r);
    bad_layout += b.first != w.first || b.count != w.count;
  }
  for (MPI_Count i = 0; i < count; ++i) {
    int owner = -1;
    MPI_Aint displacement = -1;
    shim_distributed_locate(d, i, &owner, &displacement);
    const int want_owner = owner_of(count, size, i);
    bad_layout += owner != want_owner || displacement != i - block_of(count, size, want_owner).first;
  }
  check->expect(bad_layout == 0, where + ": " + str(bad_layout) + " ranges or locations differ from balanced blocks");
  std::vector<T> got(static_cast<std::size_t>(count), make<T>(-777));
  MPI_Win_lock_all(0, win);
  for (int r = 0; r < size; ++r) {
    const Block b = block_of(count, size, r);
    if (b.count == 0) continue;
    int owner = -1;
    MPI_Aint displacement = -1;
    shim_distributed_locate(d, b.first, &owner, &displacement);
    MPI_Get(&got[static_cast<std::size_t>(b.first)], static_cast<int>(b.count), type, owner, displacement,
            static_cast<int>(b.count), type, win);
  }
  MPI_Win_unlock_all(win);
  expect_elements(got, 0, want, where + " (MPI_Get from the distributed array)");
}

template <typename T>
void copy_rounds(const Win& w, bool thorough) {
  const Comm& c = w.c;
  const MPI_Count count = w.count;
  const std::string where = w.where + " copies";
  shim_distributed d = create_distributed(count, w.type, c.comm, where);
  auto g = [](MPI_Count i) { return (i * 7) % 1009 - 300; };
  auto junk = [&](MPI_Count i) { return 55 - i % 13 + c.rank; };
  if (thorough)
    expect_distributed<T>(d, w.type, c.comm, count, [](MPI_Count) { return make<T>(0); },
                          where + " new array is zero");

  // distributed -> mirrored (over stale node copies), distributed untouched.
  ok(shim_mirror_sync(w.m), where + ": sync");
  put_own_block<T>(c, w.m, count, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  distributed_write<T>(d, w.type, c.comm, count, g, where);
  ok(shim_mirror_copy_from_distributed(w.m, d), where + ": copy_from_distributed");
  expect_mirror<T>(w.m, count, [&](MPI_Count i) { return make<T>(g(i)); }, where + " distributed -> mirrored");
  if (thorough)
    expect_distributed<T>(d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(g(i)); },
                          where + " source left as it was");

  // ... -> distributed again, over other contents: the round trip is exact.
  distributed_write<T>(d, w.type, c.comm, count, junk, where);
  ok(shim_mirror_copy_to_distributed(w.m, d), where + ": copy_to_distributed");
  expect_distributed<T>(d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(g(i)); },
                        where + " distributed -> mirrored -> distributed");
  expect_mirror<T>(w.m, count, [&](MPI_Count i) { return make<T>(g(i)); }, where + " source left as it was");
  ok(shim_mirror_sync(w.m), where + ": sync");

  // mirrored (merged) -> distributed -> mirrored, over different node copies.
  put_own_block<T>(c, w.m, count, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(w.m), where + ": merge");
  ok(shim_mirror_copy_to_distributed(w.m, d), where + ": copy_to_distributed");
  expect_distributed<T>(d, w.type, c.comm, count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
                        where + " merged mirror -> distributed");
  put_own_block<T>(c, w.m, count, [&](MPI_Count i) { return junk(i) + c.node; }, where);
  ok(shim_mirror_copy_from_distributed(w.m, d), where + ": copy_from_distributed");
  expect_mirror<T>(w.m, count, [&](MPI_Count i) { return make<T>(merged_value(c.nodes(), i)); },
                   where + " mirrored -> distributed -> mirrored");
  ok(shim_mirror_sync(w.m), where + ": sync");
  free_distributed(d, where);
}

// ---- floating-point merges end bit-identical on every node -----------------------

// Values that do not add exactly: every process must still read the same
// bits (compared with the communicator's rank 0), close to the exact sum.
void identical_sums(const Win& w) {
  const Comm& c = w.c;
  auto value = [&](int node, MPI_Count i) { return 0.1 * static_cast<double>(i % 97) / (node + 3) + 1e-9 * node; };
  auto sum = [&](MPI_Count i) {
    long double exact = 0;
    for (int n = 0; n < c.nodes(); ++n) exact += value(n, i);
    return static_cast<double>(exact);
  };
  for (int sparse = 0; sparse < 2; ++sparse) {
    const std::string what = w.where + (sparse ? " merge_sparse" : " merge") + " of inexact sums";
    ok(shim_mirror_zero(w.m), what + ": zero");
    const Block mine = block_of(w.count, c.local_size(), c.local_rank);
    std::vector<double> in(static_cast<std::size_t>(mine.count));
    for (MPI_Count k = 0; k < mine.count; ++k) in[static_cast<std::size_t>(k)] = value(c.node, mine.first + k);
    ok(shim_mirror_put(w.m, mine.first, mine.count, in.data()), what + ": put");
    ok(sparse ? shim_mirror_merge_sparse(w.m, 100) : shim_mirror_merge(w.m), what);
    std::vector<double> got = mirror_get<double>(w.m, 0, w.count, what);
    std::vector<double> first = got;
    PMPI_Bcast(first.data(), static_cast<int>(w.count), MPI_DOUBLE, 0, c.comm);
    check->expect(std::memcmp(first.data(), got.data(), got.size() * sizeof(double)) == 0,
                  what + ": differs in some bit from the communicator's rank 0");
    long long far = 0;
    for (MPI_Count i = 0; i < w.count; ++i)
      far += std::abs(got[static_cast<std::size_t>(i)] - sum(i)) > 1e-12 * (1 + std::abs(sum(i)));
    check->expect(far == 0, what + ": " + str(far) + " elements are not the sum");
  }
  ok(shim_mirror_sync(w.m), w.where + ": sync");
}

// ---- the windows ----------------------------------------------------------------

// Merge of one element type, then whatever else `more` checks on the window.
// (Two merge rounds when `more` checks more: the other writes too.)
template <typename T, typename More>
void type_case(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count, More more) {
  Win w = open_window(c, type, type_name, count);
  fresh_checks<T>(w);
  merge_rounds<T>(w, true);
  more(w);
  close_window(w);
}

template <typename T>
void type_case(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count) {
  Win w = open_window(c, type, type_name, count);
  fresh_checks<T>(w);
  merge_rounds<T>(w, false);
  close_window(w);
}

// Everything, briefly, on one window: for small and odd counts and
// sub-communicators.
template <typename T>
void everything(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count, int acc_iterations) {
  type_case<T>(c, type, type_name, count, [&](const Win& w) {
    layout_checks<T>(w);
    patch_rounds<T>(w, false);
    sparse_rounds<T>(w, false);
    copy_rounds<T>(w, false);
    if (acc_iterations > 0) acc_rounds<T>(w, acc_iterations);
  });
}

void small_counts(const Comm& c) {
  // Fewer elements than processes on the largest node (some blocks empty),
  // or 1; 0; 7.
  int largest = 0;
  for (int n = 0; n < c.nodes(); ++n) largest = std::max(largest, c.local_size_of(n));
  everything<int>(c, MPI_INT, "MPI_INT", largest > 2 ? largest - 1 : 1, 0);
  everything<int>(c, MPI_INT, "MPI_INT", 0, 0);
  // The Fortran integer, as the Fortran compiler sized it.
  int integer_size = 0;
  MPI_Type_size(MPI_INTEGER, &integer_size);
  check->expect(integer_size == 4, "MPI_INTEGER is " + str(integer_size) + " bytes");
  if (integer_size == 4) type_case<std::int32_t>(c, MPI_INTEGER, "MPI_INTEGER", 7);
}

// ---- 7. errors --------------------------------------------------------------------

// The counting error handler: proves that errors reach the handler the
// communicator had when the object was created.
int handler_calls = 0;
int handler_last = MPI_SUCCESS;
void counting_handler(MPI_Comm*, int* code, ...) {
  ++handler_calls;
  handler_last = *code;
}

void errors(const Comm& world) {
  MPI_Comm ret = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &ret);
  MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN);
  const Comm c = describe("errors-return world", ret);
  const MPI_Count n = 100;
  const std::string where = "errors";

  shim_mirror m = create_mirror(n, MPI_INT, c, where);
  put_own_block<int>(c, m, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(m), where + ": merge");
  auto merged = [&](MPI_Count i) { return static_cast<int>(merged_value(c.nodes(), i)); };
  auto v = [](MPI_Count i) { return 5 * i + 1; };

  // Mismatched copies: reported everywhere, nothing touched on either side.
  struct Mismatch {
    std::string name;
    MPI_Count count;
    MPI_Datatype type;
    MPI_Comm comm;
    int want;
  };
  MPI_Comm reversed = MPI_COMM_NULL, halves = MPI_COMM_NULL;
  PMPI_Comm_split(MPI_COMM_WORLD, 0, world.size - 1 - world.rank, &reversed);
  PMPI_Comm_split(MPI_COMM_WORLD, world.rank % 2, world.rank, &halves);
  std::vector<Mismatch> cases = {{"one element more", n + 1, MPI_INT, ret, MPI_ERR_SIZE},
                                 {"MPI_FLOAT for MPI_INT (same size)", n, MPI_FLOAT, ret, MPI_ERR_TYPE}};
  if (world.size > 1) {
    cases.push_back({"a reversed-rank communicator", n, MPI_INT, reversed, MPI_ERR_COMM});
    cases.push_back({"a split communicator", n, MPI_INT, halves, MPI_ERR_COMM});
  }
  for (const Mismatch& x : cases) {
    const std::string what = where + ": distributed array of " + x.name;
    shim_distributed d = create_distributed(x.count, x.type, x.comm, what);
    auto write_and_check = [&](auto sample) {
      using T = decltype(sample);
      distributed_write<T>(d, x.type, x.comm, x.count, v, what);
      for (int direction = 0; direction < 2; ++direction) {
        const int rc = direction == 0 ? shim_mirror_copy_from_distributed(m, d) : shim_mirror_copy_to_distributed(m, d);
        const std::string call = what + (direction == 0 ? ": copy_from_distributed" : ": copy_to_distributed");
        expect_class(rc, x.want, call);
        expect_mirror<int>(m, n, merged, call + " left the mirror untouched");
      }
      expect_distributed<T>(d, x.type, x.comm, x.count, [&](MPI_Count i) { return make<T>(v(i)); },
                            what + ": failed copies left the distributed array untouched");
    };
    if (x.type == MPI_FLOAT) {
      write_and_check(0.0f);
    } else {
      write_and_check(0);
    }
    free_distributed(d, what);
  }
  PMPI_Comm_free(&reversed);
  PMPI_Comm_free(&halves);

  // Local calls on bad ranges: an error, and no element written.
  ok(shim_mirror_sync(m), where + ": sync");
  std::vector<int> buffer(static_cast<std::size_t>(n + 2), -9);
  expect_class(shim_mirror_get(m, n, 1, buffer.data()), MPI_ERR_ARG, where + ": get past the end");
  expect_class(shim_mirror_get(m, -1, 1, buffer.data()), MPI_ERR_ARG, where + ": get at -1");
  expect_class(shim_mirror_get(m, n + 1, 0, buffer.data()), MPI_ERR_ARG, where + ": get of 0 past the end");
  expect_class(shim_mirror_put(m, n - 1, 2, buffer.data()), MPI_ERR_ARG, where + ": put straddling the end");
  expect_class(shim_mirror_put(m, 0, n + 1, buffer.data()), MPI_ERR_ARG, where + ": put of count + 1");
  expect_class(shim_mirror_acc(m, n - 1, 2, buffer.data(), nullptr), MPI_ERR_ARG, where + ": acc straddling the end");
  expect_class(shim_mirror_get(m, 0, -1, buffer.data()), MPI_ERR_COUNT, where + ": get of -1");
  expect_class(shim_mirror_put(m, 0, -1, buffer.data()), MPI_ERR_COUNT, where + ": put of -1");
  expect_class(shim_mirror_acc(m, 0, -1, buffer.data(), nullptr), MPI_ERR_COUNT, where + ": acc of -1");
  expect_class(shim_mirror_put(m, 0, 1, nullptr), MPI_ERR_ARG, where + ": put from a null buffer");
  int rank = -1;
  void* address = nullptr;
  MPI_Count first = 0, count = 0;
  expect_class(shim_mirror_holder(m, n, &rank), MPI_ERR_ARG, where + ": holder of element count");
  expect_class(shim_mirror_holder(m, -1, &rank), MPI_ERR_ARG, where + ": holder of element -1");
  expect_class(shim_mirror_address(m, n, &address), MPI_ERR_ARG, where + ": address of element count");
  expect_class(shim_mirror_range(m, c.local_size(), &first, &count), MPI_ERR_RANK, where + ": range of local_size");
  expect_class(shim_mirror_range(m, -1, &first, &count), MPI_ERR_RANK, where + ": range of -1");
  check->expect(std::all_of(buffer.begin(), buffer.end(), [](int x) { return x == -9; }),
                where + ": a failed get wrote into the buffer");
  ok(shim_mirror_sync(m), where + ": sync");
  expect_mirror<int>(m, n, merged, where + ": failed local calls left the mirror untouched");

  // Collective calls with bad arguments: an error on every process, no merge.
  ok(shim_mirror_sync(m), where + ": sync");
  put_own_block<int>(c, m, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_sync(m), where + ": sync");
  expect_class(shim_mirror_merge_patch(m, 0, n + 1), MPI_ERR_ARG, where + ": merge_patch of count + 1");
  expect_class(shim_mirror_merge_patch(m, -1, 2), MPI_ERR_ARG, where + ": merge_patch at -1");
  expect_class(shim_mirror_merge_patch(m, n + 1, 0), MPI_ERR_ARG, where + ": merge_patch of 0 past the end");
  expect_class(shim_mirror_merge_patch(m, 0, -1), MPI_ERR_COUNT, where + ": merge_patch of -1");
  expect_class(shim_mirror_merge_sparse(m, 0), MPI_ERR_ARG, where + ": merge_sparse with block 0");
  expect_class(shim_mirror_merge_sparse(m, -4), MPI_ERR_ARG, where + ": merge_sparse with block -4");
  expect_mirror<int>(m, n, [&](MPI_Count i) { return static_cast<int>(node_value(c.node, i)); },
                     where + ": failed merges left each node's copy as it was");
  free_mirror(m, where);

  // Bad creations: an error, and no handle.
  MPI_Datatype contiguous = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &contiguous);
  MPI_Type_commit(&contiguous);
  const std::pair<MPI_Datatype, const char*> unsupported[] = {
      {contiguous, "a contiguous derived type"}, {MPI_BYTE, "MPI_BYTE"}, {MPI_CHAR, "MPI_CHAR"},
      {MPI_2INT, "MPI_2INT"},                    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"}};
  for (const auto& [type, name] : unsupported) {
    shim_mirror bad = nullptr;
    expect_class(shim_mirror_create(10, type, ret, &bad), MPI_ERR_TYPE, where + ": mirror of " + name);
    check->expect(bad == nullptr, where + ": mirror of " + name + " gave a handle");
    shim_distributed bad_array = nullptr;
    expect_class(shim_distributed_create(10, type, ret, &bad_array), MPI_ERR_TYPE,
                 where + ": distributed array of " + name);
    check->expect(bad_array == nullptr, where + ": distributed array of " + name + " gave a handle");
  }
  MPI_Type_free(&contiguous);
  shim_mirror bad = nullptr;
  expect_class(shim_mirror_create(-1, MPI_INT, ret, &bad), MPI_ERR_COUNT, where + ": mirror of -1 elements");
  check->expect(bad == nullptr, where + ": mirror of -1 elements gave a handle");
  shim_distributed bad_array = nullptr;
  expect_class(shim_distributed_create(-1, MPI_INT, ret, &bad_array), MPI_ERR_COUNT,
               where + ": distributed array of -1 elements");
  expect_class(shim_mirror_create(10, MPI_INT, ret, nullptr), MPI_ERR_ARG,
               where + ": mirror with a null handle pointer");

  if (world.size > 1) {  // Intercommunicators: refused.
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    PMPI_Comm_split(MPI_COMM_WORLD, world.rank % 2, world.rank, &half);
    PMPI_Intercomm_create(half, 0, MPI_COMM_WORLD, world.rank % 2 == 0 ? 1 : 0, 7, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    expect_class(shim_mirror_create(10, MPI_INT, inter, &bad), MPI_ERR_COMM,
                 where + ": mirror over an intercommunicator");
    expect_class(shim_distributed_create(10, MPI_INT, inter, &bad_array), MPI_ERR_COMM,
                 where + ": distributed array over an intercommunicator");
    check->expect(bad == nullptr && bad_array == nullptr, where + ": an intercommunicator gave a handle");
    PMPI_Comm_free(&inter);
    PMPI_Comm_free(&half);
  }

  // Null handles and MPI_COMM_NULL are raised on MPI_COMM_SELF.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  expect_class(shim_mirror_sync(nullptr), MPI_ERR_ARG, where + ": sync of a null mirror");
  expect_class(shim_mirror_get(nullptr, 0, 0, nullptr), MPI_ERR_ARG, where + ": get from a null mirror");
  expect_class(shim_mirror_create(10, MPI_INT, MPI_COMM_NULL, &bad), MPI_ERR_COMM,
               where + ": mirror over MPI_COMM_NULL");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

  // The handler at creation: a counting one, replaced afterwards by
  // MPI_ERRORS_RETURN; the object's errors still go to the counting one.
  MPI_Comm counted = MPI_COMM_NULL;
  PMPI_Comm_dup(MPI_COMM_WORLD, &counted);
  MPI_Errhandler counting = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(counting_handler, &counting);
  MPI_Comm_set_errhandler(counted, counting);
  shim_mirror watched = nullptr;
  ok(shim_mirror_create(n, MPI_INT, counted, &watched), where + ": create with a counting handler");
  shim_distributed watched_array = create_distributed(n + 1, MPI_INT, counted, where + " counting handler");
  MPI_Comm_set_errhandler(counted, MPI_ERRORS_RETURN);
  handler_calls = 0;
  expect_class(shim_mirror_get(watched, n, 1, buffer.data()), MPI_ERR_ARG, where + ": get past the end (counted)");
  check->expect(handler_calls == 1 && error_class(handler_last) == MPI_ERR_ARG,
                where + ": the creation-time handler saw " + str(handler_calls) + " errors, expected 1 MPI_ERR_ARG");
  expect_class(shim_mirror_copy_from_distributed(watched, watched_array), MPI_ERR_SIZE,
               where + ": mismatched copy (counted)");
  check->expect(handler_calls == 2 && error_class(handler_last) == MPI_ERR_SIZE,
                where + ": the creation-time handler saw " + str(handler_calls) + " errors, expected 2 (MPI_ERR_SIZE)");
  MPI_Count where_first = 0, where_count = 0;
  expect_class(shim_distributed_range(watched_array, world.size, &where_first, &where_count), MPI_ERR_RANK,
               where + ": distributed range of rank size (counted)");
  check->expect(handler_calls == 3, where + ": the distributed array's creation-time handler was not called");
  // And an error while creating goes to the handler the communicator has now.
  MPI_Comm_set_errhandler(counted, counting);
  handler_calls = 0;
  expect_class(shim_mirror_create(-5, MPI_INT, counted, &bad), MPI_ERR_COUNT, where + ": create of -5 (counted)");
  check->expect(handler_calls == 1, where + ": a failed create called the handler " + str(handler_calls) + " times");
  MPI_Comm_set_errhandler(counted, MPI_ERRORS_RETURN);

  // Both objects keep working after the user frees the communicator they
  // were created over (they hold duplicates), and its handler.
  MPI_Errhandler_free(&counting);
  PMPI_Comm_free(&counted);
  free_distributed(watched_array, where + " counting handler");
  // Over `ret`: another communicator, congruent, so compatible.
  watched_array = create_distributed(n, MPI_INT, ret, where + " outliving");
  put_own_block<int>(c, watched, n, [&](MPI_Count i) { return node_value(c.node, i); }, where);
  ok(shim_mirror_merge(watched), where + ": merge after MPI_Comm_free");
  ok(shim_mirror_copy_to_distributed(watched, watched_array), where + ": copy_to_distributed after MPI_Comm_free");
  ok(shim_mirror_zero(watched), where + ": zero after MPI_Comm_free");
  ok(shim_mirror_copy_from_distributed(watched, watched_array), where + ": copy_from_distributed after MPI_Comm_free");
  expect_mirror<int>(watched, n, merged, where + ": after MPI_Comm_free of its communicator");
  handler_calls = 0;
  expect_class(shim_mirror_get(watched, -1, 1, buffer.data()), MPI_ERR_ARG, where + ": get at -1 (counted, freed)");
  check->expect(handler_calls == 1, where + ": the freed communicator's handler saw " + str(handler_calls) + " errors");
  free_distributed(watched_array, where + " outliving");
  free_mirror(watched, where + " counting handler");
  PMPI_Comm_free(&ret);
}

// ---- 8. the C++ wrappers -----------------------------------------------------------

// The wrappers over `ret` (the same processes as c, returning errors).
void cxx_wrapped(const Comm& c, MPI_Comm ret, MPI_Count n, const std::string& where) {
  shim::Mirror first(n, MPI_DOUBLE, ret);
  shim::Mirror moved(std::move(first));
  check->expect(first.handle() == nullptr && moved.handle() != nullptr, where + ": move construction");
  shim::Mirror other(5, MPI_DOUBLE, ret);
  other = std::move(moved);  // `moved` now owns the 5-element window, freed at scope end
  MPI_Count size = 0;
  shim_mirror_size(other.handle(), &size, nullptr);
  check->expect(size == n, where + ": move assignment holds " + str(size) + " elements");

  const auto [mine_first, mine_count] = other.range(c.local_rank);
  const Block want = block_of(n, c.local_size(), c.local_rank);
  check->expect(mine_first == want.first && mine_count == want.count, where + ": range");
  std::vector<double> values(static_cast<std::size_t>(mine_count));
  for (MPI_Count k = 0; k < mine_count; ++k)
    values[static_cast<std::size_t>(k)] = static_cast<double>(node_value(c.node, mine_first + k));
  other.put(mine_first, mine_count, values.data());
  const double two = 2.0;
  other.acc(mine_first, mine_count, values.data(), &two);  // 3x
  other.merge();
  std::vector<double> got(static_cast<std::size_t>(n));
  other.get(0, n, got.data());
  expect_elements(got, 0, [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); },
                  where + ": merged");
  if (n > 0) check->expect(*other.address<double>(n - 1) == got.back(), where + ": address<double>");

  shim::Distributed array(n, MPI_DOUBLE, ret);
  shim::Distributed kept(std::move(array));
  check->expect(array.handle() == nullptr && kept.handle() != nullptr, where + ": Distributed move construction");
  other.copy_to(kept);
  const auto [owner, displacement] = kept.locate(n - 1);
  const auto [last_first, last_count] = kept.range(c.size - 1);
  check->expect(owner == c.size - 1 && displacement == last_count - 1 && last_first + last_count == n,
                where + ": locate/range of the last element");
  expect_distributed<double>(kept.handle(), MPI_DOUBLE, c.comm, n,
                             [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); },
                             where + ": copy_to");
  check->expect(kept.window() != MPI_WIN_NULL, where + ": window");
  other.zero();
  other.sync();
  other.copy_from(kept);
  other.get(0, n, got.data());
  expect_elements(got, 0, [&](MPI_Count i) { return 3.0 * static_cast<double>(merged_value(c.nodes(), i)); },
                  where + ": copy_from");
  other.merge_patch(0, 0);
  other.merge_sparse(4);  // every copy equal: multiplies by the node count
  other.get(0, n, got.data());
  expect_elements(got, 0,
                  [&](MPI_Count i) { return 3.0 * c.nodes() * static_cast<double>(merged_value(c.nodes(), i)); },
                  where + ": merge_sparse");

  {
    double buffer[2] = {};
    int code = MPI_SUCCESS;
    try {
      other.get(n - 1, 2, buffer);
    } catch (const shim::mirror_error& e) {
      code = e.code();
      check->expect(e.what() != nullptr && std::strlen(e.what()) > 0, where + ": mirror_error has no message");
    }
    expect_class(code, MPI_ERR_ARG, where + ": Mirror::get past the end throws");
    code = MPI_SUCCESS;
    try {
      shim::Mirror never(-1, MPI_INT, ret);
    } catch (const shim::mirror_error& e) {
      code = e.code();
    }
    expect_class(code, MPI_ERR_COUNT, where + ": Mirror of -1 elements throws");
    code = MPI_SUCCESS;
    try {
      shim::Distributed never(4, MPI_BYTE, ret);
    } catch (const shim::mirror_error& e) {
      code = e.code();
    }
    expect_class(code, MPI_ERR_TYPE, where + ": Distributed of MPI_BYTE throws");
  }
}

void cxx_wrappers(const Comm& c) {
  const std::string where = c.name + " C++ wrappers";
  const MPI_Count n = 333;
  // Errors become exceptions on a communicator that returns them.
  MPI_Comm ret = MPI_COMM_NULL;
  PMPI_Comm_dup(c.comm, &ret);
  MPI_Comm_set_errhandler(ret, MPI_ERRORS_RETURN);
  cxx_wrapped(c, ret, n, where);
  PMPI_Comm_free(&ret);
}

// ---- the suites ----------------------------------------------------------------------

// MIRROR_MATRIX_TIMES=1: rank 0 prints how long each part took.
template <typename Part>
void timed(const Comm& c, const std::string& name, Part part) {
  const double start = MPI_Wtime();
  part();
  PMPI_Barrier(c.comm);
  if (world_rank == 0 && std::getenv("MIRROR_MATRIX_TIMES") != nullptr)
    std::printf("  %-10s %-28s %7.3f s\n", c.name.c_str(), name.c_str(), MPI_Wtime() - start);
}

// The whole job: every element type, and everything else on one window
// each, chosen to span several 4 KiB lock stripes and every holder's block.
void world_suite(const Comm& c) {
  timed(c, "MPI_INT x5003", [&] {
    type_case<int>(c, MPI_INT, "MPI_INT", 5003, [](const Win& w) {
      layout_checks<int>(w);
      patch_rounds<int>(w, true);
      sparse_rounds<int>(w, true);
      copy_rounds<int>(w, true);
      acc_rounds<int>(w, 200);
      local_access<int>(w);
    });
  });
  timed(c, "MPI_LONG_LONG x1001", [&] {
    type_case<long long>(c, MPI_LONG_LONG, "MPI_LONG_LONG", 1001);
  });
  timed(c, "MPI_UNSIGNED_CHAR x9001", [&] {
    type_case<unsigned char>(c, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR (wraps)", 9001, [](const Win& w) {
      acc_rounds<unsigned char>(w, 200);
    });
  });
  timed(c, "MPI_SHORT x4099", [&] {
    type_case<short>(c, MPI_SHORT, "MPI_SHORT", 4099, [](const Win& w) { acc_rounds<short>(w, 100); });
  });
  timed(c, "MPI_FLOAT x1001", [&] {
    type_case<float>(c, MPI_FLOAT, "MPI_FLOAT", 1001, [](const Win& w) { patch_rounds<float>(w, false); });
  });
  // MPI_DOUBLE itself: the sub-communicator and C++ wrapper windows. The
  // Fortran type as the Fortran compiler sized it.
  int precision_size = 0;
  MPI_Type_size(MPI_DOUBLE_PRECISION, &precision_size);
  check->expect(precision_size == 8, "MPI_DOUBLE_PRECISION is " + str(precision_size) + " bytes");
  const bool fortran = precision_size == 8;
  timed(c, "MPI_DOUBLE_PRECISION x5003", [&] {
    type_case<double>(c, fortran ? MPI_DOUBLE_PRECISION : MPI_DOUBLE, fortran ? "MPI_DOUBLE_PRECISION" : "MPI_DOUBLE",
                      5003, [](const Win& w) {
      acc_rounds<double>(w, 200);
      sparse_rounds<double>(w, false);
      copy_rounds<double>(w, false);
      identical_sums(w);
    });
  });
  timed(c, "MPI_LONG_DOUBLE x1001", [&] {
    type_case<long double>(c, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 1001,
                           [](const Win& w) { sparse_rounds<long double>(w, false); });
  });
  timed(c, "MPI_C_DOUBLE_COMPLEX x999", [&] {
    using Z = std::complex<double>;
    type_case<Z>(c, MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 999, [](const Win& w) {
      sparse_rounds<Z>(w, false);
      copy_rounds<Z>(w, false);
      acc_rounds<Z>(w, 100);
    });
  });
  timed(c, "MPI_INT64_T x65537", [&] {
    type_case<std::int64_t>(c, MPI_INT64_T, "MPI_INT64_T", 65537, [](const Win& w) {
      local_access<std::int64_t>(w);
      sparse_rounds<std::int64_t>(w, false);
    });
  });
  timed(c, "small counts", [&] { small_counts(c); });
  timed(c, "C++ wrappers", [&] { cxx_wrappers(c); });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  shim::test::Checker checker("mirror_matrix");
  check = &checker;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);

  const Comm world = describe("world", MPI_COMM_WORLD);
  world_suite(world);

  // Sub-communicators: nodes are those of the communicator (a node of the
  // world may split, and node numbers follow the communicator's ranks).
  MPI_Comm reversed = MPI_COMM_NULL, halves = MPI_COMM_NULL;
  PMPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
  PMPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &halves);
  const Comm reversed_comm = describe("reversed", reversed);
  timed(reversed_comm, "MPI_INT x1001", [&] { everything<int>(reversed_comm, MPI_INT, "MPI_INT", 1001, 50); });
  const Comm half = describe(world_rank % 2 == 0 ? "even ranks" : "odd ranks", halves);
  timed(half, "MPI_DOUBLE x1001", [&] { everything<double>(half, MPI_DOUBLE, "MPI_DOUBLE", 1001, 50); });
  const Comm self = describe("self", MPI_COMM_SELF);
  timed(self, "MPI_INT x101", [&] { everything<int>(self, MPI_INT, "MPI_INT", 101, 20); });
  PMPI_Comm_free(&reversed);
  PMPI_Comm_free(&halves);

  timed(world, "errors", [&] { errors(world); });

  const int status = checker.finish();
  MPI_Finalize();
  return status;
}
