#include "rma/datatype_layout.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "common/datatype_checks.hpp"
#include "common/local_comm.hpp"
#include "common/mpi_try.hpp"

namespace shim::rma {

namespace {

std::mutex g_keyval_mutex;
int g_layout_keyval = MPI_KEYVAL_INVALID;
std::mutex g_predefined_mutex;
std::map<MPI_Datatype, DatatypeLayout> g_predefined;
std::mutex g_runs_mutex;

int delete_layout(MPI_Datatype, int, void* value, void*) {
  delete static_cast<DatatypeLayout*>(value);
  return MPI_SUCCESS;
}

bool predefined(int combiner) {
  return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
         combiner == MPI_COMBINER_F90_INTEGER;
}

// The predefined type every element of `type` has; MPI_DATATYPE_NULL when
// elements of different predefined types are mixed.
int find_basic(MPI_Datatype type, MPI_Datatype& basic) {
  basic = MPI_DATATYPE_NULL;
  bool mixed = false;
  SHIM_TRY(visit_predefined_parts(type, [&basic, &mixed](MPI_Datatype part) {
    if (basic == MPI_DATATYPE_NULL) basic = part;
    mixed = basic != part;
    return !mixed;
  }));
  if (mixed) basic = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

int describe(MPI_Datatype type, DatatypeLayout& layout) {
  SHIM_TRY(find_basic(type, layout.basic));
  if (layout.basic == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  MPI_Count lb = 0;
  SHIM_TRY(PMPI_Type_size_c(type, &layout.size));
  SHIM_TRY(PMPI_Type_get_extent_c(type, &lb, &layout.extent));
  SHIM_TRY(PMPI_Type_get_true_extent_c(type, &layout.true_lb, &layout.true_extent));
  SHIM_TRY(PMPI_Type_size_c(layout.basic, &layout.basic_size));
  MPI_Count basic_lb = 0, basic_extent = 0;
  SHIM_TRY(PMPI_Type_get_extent_c(layout.basic, &basic_lb, &basic_extent));
  // Dense: memory is exactly the packed bytes, and consecutive datatypes
  // follow each other without gaps (a pair type like MPI_DOUBLE_INT has
  // padding, so it is never dense).
  layout.dense = layout.true_lb == 0 && layout.true_extent == layout.size && layout.extent == layout.size &&
                 basic_extent == layout.basic_size;
  if (layout.dense && !predefined_type(type)) {
    // Without gaps is not yet in order: MPI pairs elements in typemap order,
    // and a permuting type (indexed {2,0,1}, a transpose) covers its memory
    // in another. Dense only if its runs, in typemap order, are the memory.
    layout.dense = false;
    SHIM_TRY(compute_runs(type, layout));
    layout.dense = layout.runs.size() == 1 && layout.runs.front().offset == 0;
  }
  return MPI_SUCCESS;
}

// Appends a run, merging it into the last one when they touch, so that a
// layout has as few runs as its memory allows; true when a new run began.
bool append_touching(std::vector<ByteRun>& runs, ByteRun run) {
  if (!runs.empty() && runs.back().offset + runs.back().bytes == run.offset) {
    runs.back().bytes += run.bytes;
    return false;
  }
  runs.push_back(run);
  return true;
}

// Where the packed bytes of one predefined element lie in its memory, in
// packed order: one piece for plain types; value then index for the pair
// types of MINLOC/MAXLOC, laid out as the C structs MPI defines them by.
template <typename Value>
std::vector<ByteRun> pair_pieces() {
  struct Pair {
    Value value;
    int index;
  };
  return {{0, static_cast<std::int64_t>(sizeof(Value))},
          {static_cast<std::int64_t>(offsetof(Pair, index)), static_cast<std::int64_t>(sizeof(int))}};
}

std::vector<ByteRun> element_pieces(MPI_Datatype basic, MPI_Count packed_size) {
  std::vector<ByteRun> pieces;
  if (basic == MPI_FLOAT_INT)
    pieces = pair_pieces<float>();
  else if (basic == MPI_DOUBLE_INT)
    pieces = pair_pieces<double>();
  else if (basic == MPI_LONG_INT)
    pieces = pair_pieces<long>();
  else if (basic == MPI_2INT)
    pieces = pair_pieces<int>();
  else if (basic == MPI_SHORT_INT)
    pieces = pair_pieces<short>();
  else if (basic == MPI_LONG_DOUBLE_INT)
    pieces = pair_pieces<long double>();
  std::int64_t total = 0;
  for (const ByteRun& piece : pieces) total += piece.bytes;
  // Everything else (Fortran pairs of two equal values included) is one
  // contiguous block; so is a pair whose packed size is not the table's.
  if (total != packed_size) pieces = {{0, packed_size}};
  // Merge pieces that touch (a double and its int).
  std::vector<ByteRun> merged;
  for (const ByteRun& piece : pieces) append_touching(merged, piece);
  return merged;
}

void add_run(DatatypeLayout& layout, std::int64_t offset, std::int64_t bytes, MPI_Count& position) {
  if (bytes <= 0) return;
  if (append_touching(layout.runs, {offset, bytes})) layout.run_starts.push_back(position);
  position += bytes;
}

// A subarray's runs in packed order: one per row of its innermost
// dimension (the last in C order, the first in Fortran order), whose
// elements lie next to each other. ints as MPI_Type_get_contents gives
// them: ndims, sizes, subsizes, starts, order.
template <typename Block>
void subarray_runs(const std::vector<int>& ints, MPI_Count element_extent, Block&& block) {
  const int dims = ints[0];
  const int* sizes = &ints[1];
  const int* subsizes = &ints[1 + dims];
  const int* starts = &ints[1 + 2 * dims];
  const bool c_order = ints[1 + 3 * dims] == MPI_ORDER_C;
  // Dimensions from the fastest-varying to the slowest, and each one's stride.
  std::vector<int> fastest_first(static_cast<std::size_t>(dims));
  for (int k = 0; k < dims; ++k) fastest_first[static_cast<std::size_t>(k)] = c_order ? dims - 1 - k : k;
  std::vector<std::int64_t> stride(static_cast<std::size_t>(dims));
  std::int64_t step = element_extent;
  std::int64_t first = 0;
  for (int d : fastest_first) {
    stride[static_cast<std::size_t>(d)] = step;
    first += std::int64_t{starts[d]} * step;
    step *= sizes[d];
  }
  const int inner = fastest_first.front();
  for (int d = 0; d < dims; ++d) {
    if (subsizes[d] == 0) return;
  }
  // An odometer over the outer dimensions, fastest first.
  std::vector<int> index(static_cast<std::size_t>(dims), 0);
  while (true) {
    std::int64_t offset = first;
    for (int d = 0; d < dims; ++d)
      offset += std::int64_t{index[static_cast<std::size_t>(d)]} * stride[static_cast<std::size_t>(d)];
    block(offset, subsizes[inner]);
    std::size_t k = 1;
    for (; k < fastest_first.size(); ++k) {
      const auto d = static_cast<std::size_t>(fastest_first[k]);
      if (++index[d] < subsizes[d]) break;
      index[d] = 0;
    }
    if (k == fastest_first.size()) return;
  }
}

// One datatype's runs (offsets from its origin, in packed order, touching
// ones merged) and its extent, which repetitions of it are spaced by.
struct DecodedRuns {
  std::vector<ByteRun> runs;
  MPI_Count extent = 0;

  void append(std::int64_t offset, std::int64_t bytes) {
    if (bytes > 0) append_touching(runs, {offset, bytes});
  }
  // `count` repetitions of `inner` from `offset`.
  void append_repeated(const DecodedRuns& inner, std::int64_t offset, std::int64_t count) {
    if (inner.runs.size() == 1 && inner.runs.front().offset == 0 && inner.runs.front().bytes == inner.extent) {
      append(offset, count * inner.extent);  // dense: the repetitions touch
      return;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      for (const ByteRun& run : inner.runs) append(offset + k * inner.extent + run.offset, run.bytes);
    }
  }
};

// Nesting deeper than this goes to the packing method below.
constexpr int kMaxDecodedDepth = 8;

// The runs of the constructors codes use for patches, tiles and records
// (vector, hvector, indexed, hindexed and their block forms, subarray,
// struct, contiguous, dup, resized), nested in each other down to plain
// elements of `basic`, read from the types' contents; false for anything
// else (darrays, pair types, a struct member of another basic type), which
// the packing method below handles. Decoding matters for speed: ARMCI-MPI
// (Global Arrays, NWChem) makes a new subarray type for every strided
// accumulate, so its runs are found once per call.
bool decode_runs(MPI_Datatype type, MPI_Datatype basic, int depth, DecodedRuns& out) {
  MPI_Count lb = 0;
  if (PMPI_Type_get_extent_c(type, &lb, &out.extent) != MPI_SUCCESS) return false;
  if (predefined_type(type)) {
    MPI_Count size = 0;
    // Pair types (padding inside) and anything MPI cannot describe: by packing.
    if (type != basic || PMPI_Type_size_c(type, &size) != MPI_SUCCESS || size != out.extent) return false;
    out.append(0, size);
    return true;
  }
  MPI_Count n_ints = 0, n_addresses = 0, n_counts = 0, n_types = 0;
  int combiner = 0;
  if (depth >= kMaxDecodedDepth ||
      PMPI_Type_get_envelope_c(type, &n_ints, &n_addresses, &n_counts, &n_types, &combiner) != MPI_SUCCESS ||
      n_counts != 0 || n_types < 1) {
    return false;
  }
  std::vector<int> ints(static_cast<std::size_t>(n_ints));
  std::vector<MPI_Aint> addresses(static_cast<std::size_t>(n_addresses));
  std::vector<MPI_Datatype> olds(static_cast<std::size_t>(n_types), MPI_DATATYPE_NULL);
  if (PMPI_Type_get_contents_c(type, n_ints, n_addresses, 0, n_types, ints.data(), addresses.data(), nullptr,
                               olds.data()) != MPI_SUCCESS) {
    return false;
  }
  std::vector<DecodedRuns> inners(olds.size());
  bool decoded = true;
  for (std::size_t k = 0; k < olds.size() && decoded; ++k) decoded = decode_runs(olds[k], basic, depth + 1, inners[k]);
  // Derived `olds` are handles get_contents made for us; if freeing one
  // fails, the packing method below still finds the runs.
  for (MPI_Datatype& old : olds) {
    if (!predefined_type(old) && PMPI_Type_free(&old) != MPI_SUCCESS) decoded = false;
  }
  if (!decoded) return false;
  const DecodedRuns& inner = inners.front();
  auto block = [&](std::int64_t offset, std::int64_t elements) { out.append_repeated(inner, offset, elements); };
  switch (combiner) {
    case MPI_COMBINER_STRUCT:
      for (int k = 0; k < ints[0]; ++k) {
        out.append_repeated(inners[static_cast<std::size_t>(k)], addresses[static_cast<std::size_t>(k)], ints[1 + k]);
      }
      return true;
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      block(0, 1);
      return true;
    case MPI_COMBINER_CONTIGUOUS:
      block(0, ints[0]);
      return true;
    case MPI_COMBINER_VECTOR:
      for (int k = 0; k < ints[0]; ++k) block(std::int64_t{k} * ints[2] * inner.extent, ints[1]);
      return true;
    case MPI_COMBINER_HVECTOR:
      for (int k = 0; k < ints[0]; ++k) block(std::int64_t{k} * addresses[0], ints[1]);
      return true;
    case MPI_COMBINER_INDEXED:
      for (int k = 0; k < ints[0]; ++k) block(std::int64_t{ints[1 + ints[0] + k]} * inner.extent, ints[1 + k]);
      return true;
    case MPI_COMBINER_HINDEXED:
      for (int k = 0; k < ints[0]; ++k) block(addresses[static_cast<std::size_t>(k)], ints[1 + k]);
      return true;
    case MPI_COMBINER_INDEXED_BLOCK:
      for (int k = 0; k < ints[0]; ++k) block(std::int64_t{ints[2 + k]} * inner.extent, ints[1]);
      return true;
    case MPI_COMBINER_HINDEXED_BLOCK:
      for (int k = 0; k < ints[0]; ++k) block(addresses[static_cast<std::size_t>(k)], ints[1]);
      return true;
    case MPI_COMBINER_SUBARRAY:
      subarray_runs(ints, inner.extent, block);
      return true;
    default:
      return false;
  }
}

}  // namespace

DatatypeLayout* datatype_layout(MPI_Datatype type, int& rc) {
  MPI_Count ints = 0, addresses = 0, counts = 0, types = 0;
  int combiner = 0;
  rc = PMPI_Type_get_envelope_c(type, &ints, &addresses, &counts, &types, &combiner);
  if (rc != MPI_SUCCESS) return nullptr;
  if (predefined(combiner)) {
    // Predefined handles are constants of the MPI library, never freed, so
    // a table keyed by handle is safe here (and avoids attributes on them).
    std::lock_guard lock(g_predefined_mutex);
    auto [entry, inserted] = g_predefined.try_emplace(type);
    if (inserted) {
      entry->second.named = combiner == MPI_COMBINER_NAMED;
      rc = describe(type, entry->second);
      if (rc == MPI_SUCCESS) rc = compute_runs(type, entry->second);
      if (rc != MPI_SUCCESS) {
        g_predefined.erase(entry);
        return nullptr;
      }
    }
    return &entry->second;
  }
  // One lock over lookup and insertion: two threads inserting for the same
  // type would otherwise delete each other's layout.
  std::lock_guard lock(g_keyval_mutex);
  if (g_layout_keyval == MPI_KEYVAL_INVALID) {
    rc = PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_layout, &g_layout_keyval, nullptr);
    if (rc != MPI_SUCCESS) return nullptr;
  }
  void* cached = nullptr;
  int found = 0;
  rc = PMPI_Type_get_attr(type, g_layout_keyval, &cached, &found);
  if (rc != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<DatatypeLayout*>(cached);
  // Only committed types are taken, and cached, as MPICH takes only them.
  if (!committed_type(type)) {
    rc = MPI_ERR_TYPE;
    return nullptr;
  }
  auto layout = std::make_unique<DatatypeLayout>();
  rc = describe(type, *layout);
  if (rc != MPI_SUCCESS) return nullptr;
  rc = PMPI_Type_set_attr(type, g_layout_keyval, layout.get());
  if (rc != MPI_SUCCESS) return nullptr;
  return layout.release();
}

// Where each packed byte comes from, found by packing a buffer whose bytes
// hold digits of their own offsets, one base-256 digit per pass: this works
// for every type constructor (subarray and darray included) without decoding
// any of them.
int compute_runs(MPI_Datatype type, DatatypeLayout& layout) {
  std::lock_guard lock(g_runs_mutex);
  if (!layout.runs.empty() || layout.size == 0) return MPI_SUCCESS;
  if (layout.dense) {
    layout.runs.push_back({0, layout.size});
    layout.run_starts.push_back(0);
    return MPI_SUCCESS;
  }
  DecodedRuns decoded;
  if (decode_runs(type, layout.basic, 0, decoded)) {
    MPI_Count position = 0;
    for (const ByteRun& run : decoded.runs) add_run(layout, run.offset, run.bytes, position);
    return MPI_SUCCESS;
  }
  const std::size_t span = static_cast<std::size_t>(layout.true_extent);
  const std::size_t packed = static_cast<std::size_t>(layout.size);
  std::vector<unsigned char> source(span);
  std::vector<unsigned char> digits(packed);
  std::vector<std::uint64_t> origin(packed, 0);
  unsigned char* base = source.data() - layout.true_lb;
  for (int pass = 0; (span - 1) >> (8 * pass) != 0 || pass == 0; ++pass) {
    for (std::size_t b = 0; b < span; ++b) source[b] = static_cast<unsigned char>(b >> (8 * pass));
    MPI_Count position = 0;
    SHIM_TRY(PMPI_Pack_c(base, 1, type, digits.data(), layout.size, &position, local_comm()));
    for (std::size_t i = 0; i < packed; ++i) origin[i] |= std::uint64_t{digits[i]} << (8 * pass);
    if (pass == 7) break;
  }
  // Only each element's first packed byte is trusted: MPICH packs some
  // types by value, so padding bytes (6 of x86's 16-byte long double) do
  // not carry their offsets. The element's memory then follows from its
  // type.
  const std::vector<ByteRun> pieces = element_pieces(layout.basic, layout.basic_size);
  MPI_Count position = 0;
  for (std::size_t first = 0; first < packed; first += static_cast<std::size_t>(layout.basic_size)) {
    const std::int64_t start = static_cast<std::int64_t>(origin[first]) + layout.true_lb;
    for (const ByteRun& piece : pieces) {
      add_run(layout, start + piece.offset, piece.bytes, position);
    }
  }
  return MPI_SUCCESS;
}

void runs_of_stream(const DatatypeLayout& layout, MPI_Count first, MPI_Count bytes, std::vector<ByteRun>& out) {
  if (layout.dense) {
    // Consecutive datatypes touch: the stream is the memory.
    append_touching(out, {first, bytes});
    return;
  }
  MPI_Count position = first;
  const MPI_Count end = first + bytes;
  while (position < end) {
    const MPI_Count copy = position / layout.size;
    const MPI_Count within = position % layout.size;
    const auto next = std::upper_bound(layout.run_starts.begin(), layout.run_starts.end(), within);
    const std::size_t index = static_cast<std::size_t>(next - layout.run_starts.begin()) - 1;
    const ByteRun& run = layout.runs[index];
    const MPI_Count into = within - layout.run_starts[index];
    const MPI_Count take = std::min(run.bytes - into, end - position);
    const std::int64_t offset = copy * layout.extent + run.offset + into;
    append_touching(out, {offset, take});
    position += take;
  }
}

void free_datatype_layout_keyval() {
  std::lock_guard lock(g_keyval_mutex);
  // Types still alive keep the keyval until they go (MPI's rule for keyvals).
  if (g_layout_keyval != MPI_KEYVAL_INVALID) static_cast<void>(PMPI_Type_free_keyval(&g_layout_keyval));
}

}  // namespace shim::rma
