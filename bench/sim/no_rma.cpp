// The simulated build leaves out the accumulate side (its server thread
// calls MPI beside the application, which SMPI does not support): the RMA
// wing never starts here, and MPI_Win_allocate is not intercepted.
#include "shim/rma_startup.hpp"

namespace shim {

void start_rma_wing(StartMode) {}
void stop_rma_wing() {}
bool rma_wing_ready() { return false; }

}  // namespace shim
