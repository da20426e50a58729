// The simulated build leaves out the accumulate side (its server thread
// calls MPI beside the application, which SMPI does not support): the
// runtime's RMA start-up and shutdown do nothing here.
#include "rma/rma_runtime.hpp"

namespace shim::rma {

void start_rma(bool, bool) {}
void stop_rma() {}

}  // namespace shim::rma
