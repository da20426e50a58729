// Errors of the mirror API: the call returns the MPI error class itself, and
// the reason is printed as one "shim: " line on stderr.
//
// Why not a code with its own MPI_Error_string: MPICH 4.0.2 garbles the
// string of codes added to a predefined class with MPI_Add_error_code (it
// prints an unrelated internal error stack), and a dynamic class would hide
// the predefined class (MPI_ERR_SIZE, ...) that callers test for.
#pragma once

#include <string>

namespace shim::mirror {

// Prints `message` (once per distinct message per process, so a loop over a
// failing call does not flood stderr) when `print`, and returns the class.
// Collective calls print on one process only: every process finds the
// same error there.
int report_error(int error_class, const std::string& message, bool print = true);

}  // namespace shim::mirror
