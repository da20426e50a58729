#include "tests/mpi/accumulate/model.hpp"

#include <cstdio>
#include <cstring>
#include <set>

namespace shim::test::accumulate {

unsigned char guard_byte(int t, MPI_Aint i) { return static_cast<unsigned char>(t * 131 + i * 7 + 1); }

void apply_op(Model& m, const RmaOp& op, std::vector<std::vector<unsigned char>>* old) {
  if (op.proc_null) return;
  const auto offs = element_offsets(*op.tlay, op.tcount);
  std::vector<unsigned char> value(op.type->size), compare(op.type->size);
  for (std::size_t k = 0; k < offs.size(); ++k) {
    const MPI_Aint pos = op.tbyte + offs[k];
    if (pos < 0 || pos >= static_cast<MPI_Aint>(m.bytes.size()) || m.element_at[static_cast<std::size_t>(pos)] < 0 ||
        m.elements[static_cast<std::size_t>(m.element_at[static_cast<std::size_t>(pos)])].type != op.type)
      test_bug("operation on no element of its type: " + describe(op) + " at byte " + str(pos));
    unsigned char* target = m.at(pos);
    if (old) old->emplace_back(target, target + op.type->size);
    op.type->make(value.data(), op.seeds[k]);
    if (op.fn == Fn::Cas) {
      op.type->make(compare.data(), op.compare_seed);
      if (op.type->equal(target, compare.data())) std::memcpy(target, value.data(), op.type->size);
    } else {
      op.type->apply(op.op->op, target, value.data());
    }
  }
}

void known_mpich_defect(const std::string& defect, const std::string& text) {
  static std::set<std::string> reported;
  ++stats.mpich_defects;
  if (reported.insert(defect).second)
    std::fprintf(stderr, "accumulate_matrix: rank %d: (%s, not counted) %s\n", world_rank, defect.c_str(),
                 text.c_str());
}

const char* const kMpich6083 = "MPICH 4.0.2 defect pmodels/mpich#6083: MPI_MAX/MPI_MIN compare unsigned as signed";

void compare_memory(const unsigned char* mem, const Model& m, const std::string& where, bool excuse_6083) {
  auto got = [&](std::size_t e) { return mem + m.element_offset[e]; };
  auto want = [&](std::size_t e) { return &m.bytes[static_cast<std::size_t>(m.element_offset[e])]; };
  auto mismatch = [&](std::size_t e) {
    const TypeInfo& t = *m.elements[e].type;
    return m.where(m.element_offset[e]) + ": got " + t.show(got(e)) + ", expected " + t.show(want(e));
  };
  check->expect_elements(
      m.elements.size(),
      [&](std::size_t e) {
        if (m.elements[e].type->equal(got(e), want(e))) return shim::test::Verdict::same;
        if (!excuse_6083 || !m.elements[e].mpich_6083) return shim::test::Verdict::differs;
        known_mpich_defect(kMpich6083, where + ": " + mismatch(e));
        return shim::test::Verdict::excused;
      },
      mismatch, where);
  stats.elements += static_cast<long>(m.elements.size());
  long changed = 0;
  for (std::size_t i = 0; i < m.bytes.size(); ++i) {
    if (m.covered[i] || mem[i] == m.bytes[i]) continue;
    if (++changed <= 4)
      check->fail(where + ": guard byte " + str(static_cast<long long>(i)) + " (outside every element) changed: got " +
                  str(mem[i]) + ", expected " + str(m.bytes[i]));
  }
}

}  // namespace shim::test::accumulate
