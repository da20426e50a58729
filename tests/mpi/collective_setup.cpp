#include "tests/mpi/collective_setup.hpp"

#include <cstddef>

namespace shim::test {

DerivedTypes::~DerivedTypes() {
  for (MPI_Datatype& type : types_) PMPI_Type_free(&type);
}

MPI_Datatype DerivedTypes::commit(MPI_Datatype type) {
  PMPI_Type_commit(&type);
  types_.push_back(type);
  return type;
}

MPI_Datatype DerivedTypes::strided_ints() {
  MPI_Datatype vector;
  PMPI_Type_vector(3, 2, 4, MPI_INT, &vector);
  return commit(vector);
}

MPI_Datatype DerivedTypes::record() {
  struct Record {
    int a;
    double b;
    char c;
  };
  const int lengths[3] = {1, 1, 1};
  const MPI_Aint displs[3] = {offsetof(Record, a), offsetof(Record, b), offsetof(Record, c)};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype raw, record;
  PMPI_Type_create_struct(3, lengths, displs, types, &raw);
  PMPI_Type_create_resized(raw, 0, sizeof(Record), &record);
  PMPI_Type_free(&raw);
  return commit(record);
}

MPI_Datatype DerivedTypes::spaced_int() {
  MPI_Datatype spaced;
  PMPI_Type_create_resized(MPI_INT, 0, 12, &spaced);
  return commit(spaced);
}

MPI_Datatype DerivedTypes::negative_lb_int() {
  MPI_Datatype negative_lb;
  PMPI_Type_create_resized(MPI_INT, -8, 16, &negative_lb);
  return commit(negative_lb);
}

MPI_Datatype absolute_elements(const void* buffer, MPI_Count count, MPI_Datatype type) {
  MPI_Aint address = 0;
  PMPI_Get_address(buffer, &address);
  const MPI_Count displacement = address;
  MPI_Datatype absolute = MPI_DATATYPE_NULL;
  PMPI_Type_create_struct_c(1, &count, &displacement, &type, &absolute);
  return absolute;
}

bool no_data(MPI_Datatype type, MPI_Count count) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return count * size == 0;
}

std::vector<NamedComm> test_communicators(bool with_duplicate) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<NamedComm> comms;
  comms.push_back({"world", MPI_COMM_WORLD});
  MPI_Comm c;
  if (with_duplicate) {
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    comms.push_back({"dup(world)", c, true});
  }
  PMPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &c);
  comms.push_back({"reversed", c});
  PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
  comms.push_back({"split(rank%2)", c});
  PMPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 1 ? MPI_UNDEFINED : 0, rank, &c);
  comms.push_back({"without rank%3==1", c});
  comms.push_back({"self", MPI_COMM_SELF});
  return comms;
}

void free_test_communicator(NamedComm& named) {
  if (named.comm != MPI_COMM_WORLD && named.comm != MPI_COMM_SELF && named.comm != MPI_COMM_NULL)
    PMPI_Comm_free(&named.comm);
}

int processes_on_this_host() {
  MPI_Comm host;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int host_size = 0;
  PMPI_Comm_size(host, &host_size);
  PMPI_Comm_free(&host);
  return host_size;
}

EvenOddIntercomm::EvenOddIntercomm(int tag) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half_);
  PMPI_Intercomm_create(half_, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, tag, &inter_);
}

EvenOddIntercomm::~EvenOddIntercomm() {
  PMPI_Comm_free(&inter_);
  PMPI_Comm_free(&half_);
}

}  // namespace shim::test
