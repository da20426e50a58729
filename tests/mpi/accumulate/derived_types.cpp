// Scenario: derived datatypes on the origin, target and result side
// (vectors, resized, indexed, subarray, struct, contiguous and nested types over every kind of
// element, pairs included), for operations and types chosen to cover each
// category; holes in strided targets keep their values, holes in result
// buffers their bytes.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/accumulate/items.hpp"

namespace shim::test::accumulate {
namespace {

// Derived datatypes on the origin, target and result side, each on its own
// elements per origin, plus (for order-independent operations) a strided
// block all origins accumulate into. Holes in strided targets must keep
// their values; holes in result buffers their bytes.
class DerivedItem : public Item {
 public:
  DerivedItem(const OpInfo& op, const TypeInfo& type) : op_(op), type_(type) {}
  // Per origin: a (3 elements), b (5), c (5), d (9), e (4), f (3), g (3),
  // h (12), i (24), j (9), k (10).
  static constexpr int kBlocks = 11;
  static constexpr int kSpan[kBlocks] = {3, 5, 5, 9, 4, 3, 3, 12, 24, 9, 10};
  void place(Cursor& cursor, int P) override {
    const auto s = static_cast<MPI_Aint>(type_.size);
    shared_ = op_.reorderable ? cursor.take(5 * s) : -1;
    own_.clear();
    for (int o = 0; o < P; ++o)
      for (int b = 0; b < kBlocks; ++b) own_.push_back(cursor.take(kSpan[b] * s));
  }
  void init(Model& m, int P, int t) const override {
    const std::string name = std::string("derived types ") + op_.name + " " + type_.name;
    const bool known = mpich_6083(op_, type_);
    if (shared_ >= 0)
      m.block(
          shared_, type_, 5, name + " shared strided block", [&](int e) { return init_seed(op_, t, e); }, known);
    for (int o = 0; o < P; ++o)
      for (int b = 0; b < kBlocks; ++b)
        m.block(
            own_[static_cast<std::size_t>(o * kBlocks + b)], type_, kSpan[b],
            name + " block " + static_cast<char>('a' + b) + " of origin " + str(o),
            [&](int e) { return init_seed(op_, t, e + b + o % 4); }, known);
  }
  void plan(std::vector<RmaOp>& out, const PlanContext& x) const override {
    const bool no_op = is(op_, MPI_NO_OP);
    auto seeds = [&](RmaOp& r, int salt) {
      const std::size_t n = r.tlay->offsets.size() * static_cast<std::size_t>(r.tcount);
      for (std::size_t k = 0; k < n; ++k) r.seeds.push_back(operand_seed(op_, x.o, x.t, static_cast<int>(k) + salt));
      out.push_back(std::move(r));
    };
    auto own = [&](int b) { return own_[static_cast<std::size_t>(x.o * kBlocks + b)]; };
    // An update: MPI_Accumulate, or for MPI_NO_OP (which only reads) a
    // fetch through MPI_Get_accumulate into `result` x `result_count`.
    auto update = [&](int variant, Shape origin, MPI_Count origin_count, Shape target, MPI_Count target_count,
                      MPI_Aint at, Shape result, MPI_Count result_count, const char* name) {
      return no_op ? typed(gacc_fn(variant, x.passive), op_, type_, origin, origin_count, target, target_count, at,
                           result, result_count, name)
                   : typed(acc_fn(variant, x.passive), op_, type_, origin, origin_count, target, target_count, at,
                           Shape::Basic, 0, name);
    };
    if (shared_ >= 0) {
      RmaOp r = typed(acc_fn(x.variant, x.passive), op_, type_, Shape::Basic, 3, Shape::Vector3s2, 1, shared_,
                      Shape::Basic, 0, "strided target shared by all origins");
      r.exclusive = false;
      seeds(r, 0);
    }
    // (a) strided origin, contiguous target.
    {
      RmaOp r = update(x.variant + 1, Shape::Vector3s2, 1, Shape::Basic, 3, own(0), Shape::Basic, 3, "a");
      seeds(r, 1);
    }
    // (b) contiguous origin, strided target: holes stay.
    {
      RmaOp r = update(x.variant + 2, Shape::Basic, 3, Shape::Vector3s2, 1, own(1), Shape::Basic, 3, "b");
      seeds(r, 2);
    }
    // (c) resized target type, results into a resized (strided) result type.
    {
      RmaOp r = typed(gacc_fn(x.variant + 3, x.passive), op_, type_, Shape::Basic, 3, Shape::Resized2, 3, own(2),
                      Shape::Resized3, 3, "c");
      seeds(r, 3);
    }
    // (d) indexed origin and target of different shapes, results into
    // contiguous pairs.
    {
      RmaOp r = typed(gacc_fn(x.variant + 4, x.passive), op_, type_, Shape::IndexedA, 1, Shape::IndexedB, 1, own(3),
                      Shape::Contig2, 3, "d");
      seeds(r, 4);
    }
    // (e) contiguous-of-type target (for pair types: contiguous of pairs).
    {
      RmaOp r = update(x.variant + 5, Shape::Basic, 4, Shape::Contig2, 2, own(4), Shape::Contig2, 2, "e");
      seeds(r, 5);
    }
    // (f) contiguous origin into a target whose typemap permutes its memory,
    // results contiguous: element i of the origin meets the target's i-th
    // typemap element, and its old value lands at result i.
    {
      RmaOp r = typed(gacc_fn(x.variant + 6, x.passive), op_, type_, Shape::Basic, 3, Shape::Permuted3, 1, own(5),
                      Shape::Basic, 3, "f");
      seeds(r, 6);
    }
    // (g) a permuting origin into a contiguous target.
    {
      RmaOp r = update(x.variant + 7, Shape::Permuted3, 1, Shape::Basic, 3, own(6), Shape::Permuted3, 1, "g");
      seeds(r, 7);
    }
    // (h) contiguous origin into a C-order subarray target, results into a
    // Fortran-order subarray.
    {
      RmaOp r = typed(gacc_fn(x.variant + 8, x.passive), op_, type_, Shape::Basic, 4, Shape::SubarrayC, 1, own(7),
                      Shape::SubarrayF3, 1, "h");
      seeds(r, 8);
    }
    // (i) two Fortran-order subarrays on both sides: the second instance
    // starts one whole array (the type's extent) after the first.
    {
      RmaOp r = update(x.variant + 9, Shape::SubarrayF3, 2, Shape::SubarrayF3, 2, own(8), Shape::Basic, 8, "i");
      seeds(r, 9);
    }
    // (j) nested types: pairs in a vector into a permuting index of
    // vectors, results back into pairs in a vector.
    {
      RmaOp r = typed(gacc_fn(x.variant + 10, x.passive), op_, type_, Shape::VectorOfContig2, 1, Shape::IndexedOfVector,
                      1, own(9), Shape::VectorOfContig2, 1, "j");
      seeds(r, 10);
    }
    // (k) contiguous origin into two records (structs whose members are
    // not in memory order), results into two records.
    {
      RmaOp r = typed(gacc_fn(x.variant + 11, x.passive), op_, type_, Shape::Basic, 6, Shape::StructOfPairAndOne, 2,
                      own(10), Shape::StructOfPairAndOne, 2, "k");
      seeds(r, 11);
    }
  }

 private:
  const OpInfo& op_;
  const TypeInfo& type_;
  MPI_Aint shared_ = -1;
  std::vector<MPI_Aint> own_;
};

const std::pair<const char*, const char*> kDerived[] = {
    {"MPI_SUM", "MPI_INT"},         {"MPI_REPLACE", "MPI_DOUBLE"},    {"MPI_BXOR", "MPI_LONG"},
    {"MPI_MAXLOC", "MPI_2INT"},     {"MPI_MINLOC", "MPI_DOUBLE_INT"}, {"MPI_PROD", "MPI_C_DOUBLE_COMPLEX"},
    {"MPI_SUM", "MPI_LONG_DOUBLE"}, {"MPI_LOR", "MPI_C_BOOL"},        {"MPI_REPLACE", "MPI_SHORT_INT"},
    {"MPI_NO_OP", "MPI_FLOAT_INT"}, {"MPI_MAX", "MPI_UINT8_T"}};

}  // namespace

std::unique_ptr<Item> derived_item(const OpInfo& op, const TypeInfo& type) {
  return std::make_unique<DerivedItem>(op, type);
}

void add_derived_items(Case& k, int slice, int of) {
  int n = 0;
  for (auto [op, t] : kDerived)
    if (n++ % of == slice % of) k.items.push_back(derived_item(op_named(op), type_named(t)));
}

}  // namespace shim::test::accumulate
