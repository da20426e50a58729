#include "tests/mpi/mirror/windows.hpp"

namespace shim::test::mirror {

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

Win open_window(const Comm& c, MPI_Datatype type, const std::string& type_name, MPI_Count count) {
  const std::string where = c.name + " " + type_name + " x" + str(count);
  return {c, create_mirror(count, type, c, where), count, type, where};
}

void close_window(Win& w) { free_mirror(w.m, w.where); }

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

}  // namespace shim::test::mirror
