// Scenario: every operation with every element type MPI allows it for, on
// blocks all origins accumulate into (order-independent operations) and on
// blocks of each origin (accumulate, get-accumulate, fetch-and-op);
// compare-and-swap that swaps and that does not; count 0 and MPI_PROC_NULL
// with every call of the family.
#include <memory>
#include <utility>
#include <vector>

#include "tests/mpi/accumulate/items.hpp"

namespace shim::test::accumulate {
namespace {

// One operation with one type: a block all origins accumulate into (for
// operations whose result does not depend on arrival order) and a block per
// origin that gets an accumulate of 2 elements, a get-accumulate of 3 and a
// fetch-and-op.
class MatrixItem : public Item {
 public:
  MatrixItem(const OpInfo& op, const TypeInfo& type) : op_(op), type_(type) {}
  void place(Cursor& cursor, int P) override {
    const auto s = static_cast<MPI_Aint>(type_.size);
    shared_ = shared_block() ? cursor.take(3 * s) : -1;
    own_.clear();
    for (int o = 0; o < P; ++o) own_.push_back(cursor.take(6 * s));
  }
  void init(Model& m, int P, int t) const override {
    const std::string name = std::string(op_.name) + " " + type_.name;
    const bool unsigned_minmax = mpich_6083(op_, type_);
    if (shared_ >= 0)
      m.block(
          shared_, type_, 3, name + " block shared by all origins", [&](int e) { return init_seed(op_, t, e); },
          unsigned_minmax);
    for (int o = 0; o < P; ++o)
      m.block(
          own_[static_cast<std::size_t>(o)], type_, 6, name + " block of origin " + str(o),
          [&](int e) { return init_seed(op_, t, e + 1 + o % 8); }, unsigned_minmax);
  }
  void plan(std::vector<RmaOp>& out, const PlanContext& x) const override {
    const auto s = static_cast<MPI_Aint>(type_.size);
    if (shared_ >= 0) {
      RmaOp r = typed(acc_fn(x.variant, false), op_, type_, Shape::Basic, 3, Shape::Basic, 3, shared_, Shape::Basic, 0,
                      "shared block");
      for (int e = 0; e < 3; ++e) r.seeds.push_back(operand_seed(op_, x.o, x.t, e));
      r.exclusive = false;
      out.push_back(std::move(r));
    }
    const MPI_Aint own = own_[static_cast<std::size_t>(x.o)];
    if (!is(op_, MPI_NO_OP)) {  // MPI_NO_OP is for the fetching calls only
      RmaOp r = typed(acc_fn(x.variant + 1, x.passive), op_, type_, Shape::Basic, 2, Shape::Basic, 2, own, Shape::Basic,
                      0, "own block");
      for (int e = 0; e < 2; ++e) r.seeds.push_back(operand_seed(op_, x.o, x.t, e + 3));
      out.push_back(std::move(r));
    }
    RmaOp g = typed(gacc_fn(x.variant + 2, x.passive), op_, type_, Shape::Basic, 3, Shape::Basic, 3, own + 2 * s,
                    Shape::Basic, 3, "own block");
    for (int e = 0; e < 3; ++e) g.seeds.push_back(operand_seed(op_, x.o, x.t, e + 5));
    out.push_back(std::move(g));
    out.push_back(single(Fn::Fop, &op_, type_, own + 5 * s, operand_seed(op_, x.o, x.t, 8), "own block"));
  }

 private:
  bool shared_block() const { return op_.reorderable; }
  const OpInfo& op_;
  const TypeInfo& type_;
  MPI_Aint shared_ = -1;
  std::vector<MPI_Aint> own_;
};

// MPI_Compare_and_swap per origin: one that swaps (compare = current value)
// and one that does not (compare differs), both returning the old value.
class CasItem : public Item {
 public:
  explicit CasItem(const TypeInfo& type) : type_(type) {}
  void place(Cursor& cursor, int P) override {
    own_.clear();
    for (int o = 0; o < P; ++o) own_.push_back(cursor.take(2 * static_cast<MPI_Aint>(type_.size)));
  }
  void init(Model& m, int P, int t) const override {
    for (int o = 0; o < P; ++o)
      m.block(own_[static_cast<std::size_t>(o)], type_, 2,
              std::string("MPI_Compare_and_swap ") + type_.name + " block of origin " + str(o),
              [&](int e) { return seed(t, o, e); });
  }
  void plan(std::vector<RmaOp>& out, const PlanContext& x) const override {
    const MPI_Aint own = own_[static_cast<std::size_t>(x.o)];
    RmaOp yes = single(Fn::Cas, nullptr, type_, own, 200 + x.o * 3 + x.t, "compare equal: swaps");
    yes.compare_seed = seed(x.t, x.o, 0);
    RmaOp no = single(Fn::Cas, nullptr, type_, own + static_cast<MPI_Aint>(type_.size), 300 + x.o, "compare differs");
    no.compare_seed = seed(x.t, x.o, 1) + 1;
    out.push_back(std::move(yes));
    out.push_back(std::move(no));
  }

 private:
  static long long seed(int t, int o, int e) { return 10 + t * 5 + o * 2 + e; }
  const TypeInfo& type_;
  std::vector<MPI_Aint> own_;
};

// One origin's sequence of accumulate calls to the same element(s) in one
// epoch: MPI orders them, so the final value and every fetched value must

// Count 0 (all calls that take counts) and MPI_PROC_NULL targets (all
// calls): nothing changes, result buffers stay untouched, requests complete.
class EmptyItem : public Item {
 public:
  bool always() const override { return true; }
  void place(Cursor& cursor, int P) override {
    own_.clear();
    for (int o = 0; o < P; ++o) own_.push_back(cursor.take(4 * sizeof(int)));
  }
  void init(Model& m, int P, int t) const override {
    for (int o = 0; o < P; ++o)
      m.block(own_[static_cast<std::size_t>(o)], type_named("MPI_INT"), 4,
              "count 0 / MPI_PROC_NULL block of origin " + str(o), [&](int e) { return 70 + t + o + e; });
  }
  void plan(std::vector<RmaOp>& out, const PlanContext& x) const override {
    const TypeInfo& i = type_named("MPI_INT");
    const OpInfo& sum = op_named("MPI_SUM");
    const MPI_Aint own = own_[static_cast<std::size_t>(x.o)];
    out.push_back(typed(Fn::Acc, sum, i, Shape::Basic, 0, Shape::Basic, 0, own, Shape::Basic, 0, "count 0"));
    out.push_back(typed(acc_fn(x.variant + 1, x.passive), sum, i, Shape::Vector3s2, 0, Shape::IndexedA, 0, own,
                        Shape::Basic, 0, "count 0, derived types"));
    out.push_back(typed(Fn::GAccC, op_named("MPI_REPLACE"), i, Shape::Basic, 0, Shape::Basic, 0, own, Shape::Basic, 0,
                        "count 0"));
    out.push_back(typed(gacc_fn(x.variant + 2, x.passive), sum, i, Shape::Basic, 0, Shape::Resized2, 0, own,
                        Shape::Vector3s2, 0, "count 0, derived types"));
    if (x.t != x.o) return;
    // MPI_PROC_NULL, once per origin (planned with the origin as target).
    static const Fn fns[] = {Fn::Acc, Fn::AccC, Fn::GAcc,  Fn::GAccC, Fn::Fop,
                             Fn::Cas, Fn::RAcc, Fn::RAccC, Fn::RGAcc, Fn::RGAccC};
    for (Fn f : fns) {
      if (is_request(f) && !x.passive) continue;
      RmaOp r = (f == Fn::Fop || f == Fn::Cas)
                    ? single(f, f == Fn::Cas ? nullptr : &sum, i, own, 5, "")
                    : typed(f, sum, i, Shape::Basic, 2, Shape::Basic, 2, own, Shape::Basic, has_result(f) ? 2 : 0, "");
      if (r.seeds.size() < 2 && f != Fn::Fop && f != Fn::Cas) r.seeds = {5, 6};
      r.proc_null = true;
      out.push_back(std::move(r));
    }
  }

 private:
  std::vector<MPI_Aint> own_;
};

const char* const kCasTypes[] = {"MPI_INT",     "MPI_LONG",    "MPI_SHORT", "MPI_UNSIGNED",
                                 "MPI_INT64_T", "MPI_UINT8_T", "MPI_BYTE",  "MPI_C_BOOL"};

}  // namespace

std::unique_ptr<Item> matrix_item(const OpInfo& op, const TypeInfo& type) {
  return std::make_unique<MatrixItem>(op, type);
}
std::unique_ptr<Item> cas_item(const TypeInfo& type) { return std::make_unique<CasItem>(type); }
std::unique_ptr<Item> empty_item() { return std::make_unique<EmptyItem>(); }

void add_op_type_items(Case& k, int slice, int of) {
  int n = 0;
  for (const OpInfo& op : all_ops())
    for (const TypeInfo& type : all_types())
      if ((op.categories & type.category) && n++ % of == slice) k.items.push_back(matrix_item(op, type));
  n = 0;
  for (const char* t : kCasTypes)
    if (n++ % of == slice % of) k.items.push_back(cas_item(type_named(t)));
}

}  // namespace shim::test::accumulate
