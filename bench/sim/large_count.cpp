// The MPI-4 large-count calls shim uses, on SMPI's int-count calls (SimGrid
// 3.32 has no _c variants). A count that does not fit an int is
// MPI_ERR_COUNT, as an MPI library without large-count support would say;
// the simulated sweeps stay far below that.
#include <mpi.h>

#include <climits>
#include <vector>

namespace {

bool fits(MPI_Count value) { return value >= INT_MIN && value <= INT_MAX; }

bool all_fit(const MPI_Count* values, MPI_Count n) {
  for (MPI_Count i = 0; i < n; ++i) {
    if (!fits(values[i])) return false;
  }
  return true;
}

std::vector<int> narrowed(const MPI_Count* values, MPI_Count n) { return std::vector<int>(values, values + n); }

}  // namespace

extern "C" {

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  if (!fits(sendcount) || !fits(recvcount)) return MPI_ERR_COUNT;
  return PMPI_Alltoall(sendbuf, static_cast<int>(sendcount), sendtype, recvbuf, static_cast<int>(recvcount), recvtype,
                       comm);
}

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  int size = 0;
  if (const int rc = PMPI_Comm_size(comm, &size); rc != MPI_SUCCESS) return rc;
  const std::vector<MPI_Count> sdisp(sdispls, sdispls + size);
  const std::vector<MPI_Count> rdisp(rdispls, rdispls + size);
  if (!all_fit(sendcounts, size) || !all_fit(recvcounts, size) || !all_fit(sdisp.data(), size) ||
      !all_fit(rdisp.data(), size)) {
    return MPI_ERR_COUNT;
  }
  const std::vector<int> sc = narrowed(sendcounts, size), rc = narrowed(recvcounts, size);
  const std::vector<int> sd = narrowed(sdisp.data(), size), rd = narrowed(rdisp.data(), size);
  return PMPI_Alltoallv(sendbuf, sc.data(), sd.data(), sendtype, recvbuf, rc.data(), rd.data(), recvtype, comm);
}

int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (!fits(count)) return MPI_ERR_COUNT;
  return PMPI_Bcast(buffer, static_cast<int>(count), datatype, root, comm);
}

int PMPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  if (!fits(count)) return MPI_ERR_COUNT;
  return PMPI_Irecv(buf, static_cast<int>(count), datatype, source, tag, comm, request);
}

int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Request* request) {
  if (!fits(count)) return MPI_ERR_COUNT;
  return PMPI_Isend(buf, static_cast<int>(count), datatype, dest, tag, comm, request);
}

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                MPI_Count* position, MPI_Comm comm) {
  if (!fits(incount) || !fits(outsize) || !fits(*position)) return MPI_ERR_COUNT;
  int at = static_cast<int>(*position);
  const int rc = PMPI_Pack(inbuf, static_cast<int>(incount), datatype, outbuf, static_cast<int>(outsize), &at, comm);
  *position = at;
  return rc;
}

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
  if (!fits(insize) || !fits(outcount) || !fits(*position)) return MPI_ERR_COUNT;
  int at = static_cast<int>(*position);
  const int rc = PMPI_Unpack(inbuf, static_cast<int>(insize), &at, outbuf, static_cast<int>(outcount), datatype, comm);
  *position = at;
  return rc;
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (!fits(count) || !all_fit(array_of_blocklengths, count)) return MPI_ERR_COUNT;
  const std::vector<int> lengths = narrowed(array_of_blocklengths, count);
  const std::vector<MPI_Aint> displacements(array_of_displacements, array_of_displacements + count);
  return PMPI_Type_create_hindexed(static_cast<int>(count), lengths.data(), displacements.data(), oldtype, newtype);
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                              MPI_Datatype* newtype) {
  if (!fits(count) || !all_fit(array_of_blocklengths, count)) return MPI_ERR_COUNT;
  const std::vector<int> lengths = narrowed(array_of_blocklengths, count);
  const std::vector<MPI_Aint> displacements(array_of_displacements, array_of_displacements + count);
  return PMPI_Type_create_struct(static_cast<int>(count), lengths.data(), displacements.data(), array_of_types,
                                 newtype);
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  MPI_Aint l = 0, e = 0;
  const int rc = PMPI_Type_get_extent(datatype, &l, &e);
  *lb = l;
  *extent = e;
  return rc;
}

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  int elements = 0;
  const int rc = PMPI_Get_count(status, datatype, &elements);
  *count = elements;
  return rc;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  smpi_MPI_Count bytes = 0;
  const int rc = PMPI_Type_size_x(datatype, &bytes);
  *size = bytes;
  return rc;
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  if (!fits(incount)) return MPI_ERR_COUNT;
  int bytes = 0;
  const int rc = PMPI_Pack_size(static_cast<int>(incount), datatype, comm, &bytes);
  *size = bytes;
  return rc;
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses,
                             MPI_Count* num_large_counts, MPI_Count* num_datatypes, int* combiner) {
  int integers = 0, addresses = 0, types = 0;
  const int rc = PMPI_Type_get_envelope(datatype, &integers, &addresses, &types, combiner);
  *num_integers = integers;
  *num_addresses = addresses;
  *num_large_counts = 0;
  *num_datatypes = types;
  return rc;
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count[], MPI_Datatype array_of_datatypes[]) {
  if (max_large_counts != 0 || !fits(max_integers) || !fits(max_addresses) || !fits(max_datatypes)) {
    return MPI_ERR_COUNT;
  }
  return PMPI_Type_get_contents(datatype, static_cast<int>(max_integers), static_cast<int>(max_addresses),
                                static_cast<int>(max_datatypes), array_of_integers, array_of_addresses,
                                array_of_datatypes);
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  smpi_MPI_Count lb = 0, extent = 0;
  const int rc = PMPI_Type_get_true_extent_x(datatype, &lb, &extent);
  *true_lb = lb;
  *true_extent = extent;
  return rc;
}

}  // extern "C"
