#include "common/format.hpp"
#include "shim/dispatch_support.hpp"

#include "collectives/alltoall_policy.hpp"
#include "common/log.hpp"
#include "shim/stats.hpp"

namespace shim {

void announce_decision(std::string_view collective, const CommState& state, const std::string& what,
                       std::string_view size_label, std::int64_t bytes, std::string_view algorithm,
                       const std::string& reason) {
  print_line(std::string(collective) + " on " + state.label() + ": " + what + "; " + std::string(size_label) + " " +
             format_bytes(bytes) + " (class " + stats::size_class_label(stats::size_class(bytes)) + ") -> " +
             std::string(algorithm) + ": " + reason);
}

int raise_error(MPI_Comm comm, int rc) {
  PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

}  // namespace shim
