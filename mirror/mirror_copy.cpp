#include "mirror/mirror_copy.hpp"

#include <string>

#include "common/element_type.hpp"
#include "mirror/mirror_error.hpp"

namespace shim::mirror {

int check_compatible(const char* operation, const MirroredWindow& mirror, const DistributedArray& array) {
  const std::string prefix = std::string(operation) + ": ";
  int rank = 0;
  PMPI_Comm_rank(mirror.comm(), &rank);
  const bool print = rank == 0;
  if (mirror.count() != array.count())
    return report_error(MPI_ERR_SIZE, prefix + "the mirrored window holds " + std::to_string(mirror.count()) +
                                        " elements, the distributed array " + std::to_string(array.count()), print);
  if (mirror.type() != array.type())
    return report_error(MPI_ERR_TYPE, prefix + "the mirrored window holds " + datatype_label(mirror.type()) +
                                        ", the distributed array " + datatype_label(array.type()), print);
  int relation = MPI_UNEQUAL;
  if (int rc = PMPI_Comm_compare(mirror.comm(), array.comm(), &relation); rc != MPI_SUCCESS) return rc;
  if (relation != MPI_IDENT && relation != MPI_CONGRUENT)
    return report_error(MPI_ERR_COMM, prefix + "the mirrored window and the distributed array were created over "
                                             "different communicators (other processes or another rank order)",
                        print);
  return MPI_SUCCESS;
}

int copy_from_distributed(MirroredWindow& mirror, const DistributedArray& array) {
  if (int rc = mirror.zero(); rc != MPI_SUCCESS) return rc;
  const Range mine = array.block(array.rank());
  mirror.put(mine, array.local_data());
  return mirror.merge({0, mirror.count()});
}

int copy_to_distributed(MirroredWindow& mirror, DistributedArray& array) {
  if (int rc = mirror.sync(); rc != MPI_SUCCESS) return rc;
  mirror.get(array.block(array.rank()), array.local_data());
  // Every block is written before anyone returns and starts RMA on it.
  return PMPI_Barrier(array.comm());
}

}  // namespace shim::mirror
