#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "common/process/command_runner.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// launcher: mpirun — nccl-tests' all_reduce_perf under OpenMPI, with the
// plan's hostfile, sizes and env, its output parsed into the same sweep model
// as the agents' own sweep (one all-nodes scope).
struct MpirunSweepResult {
  v1::CollectiveSweep sweep;
  std::string not_run;  // "skipped: <reason>" when mpirun or the binary is missing
  std::string output;   // what all_reduce_perf printed
};

// The command line: mpirun --hostfile H -np N --bind-to none -x NCCL_DEBUG=INFO
// -x NAME=VALUE... BINARY -b MIN -e MAX -f FACTOR -g 1 -w W -n I -c 1.
std::vector<std::string> MpirunCommand(const plan::Plan& plan, int ranks);

// What names the sweep before it runs: its scope (all-nodes), backend,
// launcher, nodes and ranks; a resumed run finds a journaled sweep by it.
v1::CollectiveSweep MpirunSweepFrame(const plan::Plan& plan);

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, process::CommandRunner& runner);
MpirunSweepResult RunMpirunSweep(const plan::Plan& plan);  // the live process runner

}  // namespace clustercert::controller
