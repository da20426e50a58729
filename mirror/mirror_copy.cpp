#include "mirror/mirror_copy.hpp"

#include <string>

#include "common/element_type.hpp"
#include "common/mpi_try.hpp"
#include "mirror/mirror_error.hpp"

namespace shim::mirror {

int check_compatible(const char* operation, const MirroredWindow& mirror, const DistributedArray& array) {
  const std::string prefix = std::string(operation) + ": ";
  int rank = 0;
  SHIM_TRY(PMPI_Comm_rank(mirror.comm(), &rank));
  const bool print = rank == 0;
  if (mirror.count() != array.count())
    return report_error(MPI_ERR_SIZE,
                        prefix + "the mirrored window holds " + std::to_string(mirror.count()) +
                            " elements, the distributed array " + std::to_string(array.count()),
                        print);
  if (mirror.type() != array.type())
    return report_error(MPI_ERR_TYPE,
                        prefix + "the mirrored window holds " + datatype_label(mirror.type()) +
                            ", the distributed array " + datatype_label(array.type()),
                        print);
  int relation = MPI_UNEQUAL;
  SHIM_TRY(PMPI_Comm_compare(mirror.comm(), array.comm(), &relation));
  if (relation != MPI_IDENT && relation != MPI_CONGRUENT)
    return report_error(MPI_ERR_COMM,
                        prefix +
                            "the mirrored window and the distributed array were created over "
                            "different communicators (other processes or another rank order)",
                        print);
  return MPI_SUCCESS;
}

int copy_from_distributed(MirroredWindow& mirror, const DistributedArray& array) {
  SHIM_TRY(mirror.zero());
  const Range mine = array.block(array.rank());
  mirror.put(mine, array.local_data());
  return mirror.merge({0, mirror.count()});
}

int copy_to_distributed(MirroredWindow& mirror, DistributedArray& array) {
  SHIM_TRY(mirror.sync());
  mirror.get(array.block(array.rank()), array.local_data());
  // Every block is written before anyone returns and starts RMA on it.
  return PMPI_Barrier(array.comm());
}

}  // namespace shim::mirror
