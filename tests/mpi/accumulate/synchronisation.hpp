// Running cases: one window for a list of cases, each case in one epoch
// per synchronisation mode it is given.
#pragma once

#include <string>
#include <vector>

#include "tests/mpi/accumulate/epoch.hpp"
#include "tests/mpi/accumulate/job.hpp"
#include "tests/mpi/accumulate/plan.hpp"
#include "tests/mpi/accumulate/windows.hpp"

namespace shim::test::accumulate {

// Cases one after the other in one window (as large as the largest needs:
// windows cost more to create than most epochs), each under its syncs.
void run_cases(const Comm& c, Creation how, const std::string& path, std::vector<Case>& cases,
               const std::vector<std::vector<Sync>>& syncs, const std::vector<int>& disp_units,
               const std::string& what);
void run_case(const Comm& c, Creation how, const std::string& path, Case&& k, const std::vector<Sync>& syncs,
              const std::vector<int>& disp_units, const std::string& what);

}  // namespace shim::test::accumulate
