// Which MPI datatypes a mirrored window accepts, and as what kind.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "common/element_kind.hpp"

namespace shim {

// The kind of a predefined integer, floating-point or complex datatype
// (C, C++ and Fortran names alike); nothing for any other datatype.
std::optional<ElementKind> element_kind_of(MPI_Datatype type);

// "MPI_DOUBLE" for predefined types, "a derived datatype" otherwise.
std::string datatype_label(MPI_Datatype type);

}  // namespace shim
