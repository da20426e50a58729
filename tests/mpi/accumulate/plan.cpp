#include "tests/mpi/accumulate/plan.hpp"

namespace shim::test::accumulate {

void place(Case& k, int P) {
  Cursor cursor;
  for (auto& item : k.items) item->place(cursor, P);
  k.bytes = aligned(cursor.at);
  k.P = P;
}

std::vector<RmaOp> plan_of(const Case& k, int o, int t, int variant_base, bool is_passive) {
  std::vector<RmaOp> ops;
  int n = 0;
  for (const auto& item : k.items) {
    const int index = n++;
    if (k.sparse && !item->always() && (o + index + variant_base) % k.P != t) continue;
    PlanContext x{k.P, o, t, variant_base + o * 7 + t * 3 + index, is_passive};
    item->plan(ops, x);
  }
  return ops;
}

void init_model(const Case& k, Model& m, MPI_Aint window_bytes, int t) {
  m.reset(window_bytes, t);
  for (const auto& item : k.items) item->init(m, k.P, t);
}

void final_model(const Case& k, Model& m, MPI_Aint window_bytes, int t, int variant_base, bool is_passive) {
  init_model(k, m, window_bytes, t);
  for (int o = 0; o < k.P; ++o)
    for (const RmaOp& op : plan_of(k, o, t, variant_base, is_passive)) apply_op(m, op, nullptr);
}

}  // namespace shim::test::accumulate
