#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"
#include "common/process/command_runner.h"
#include "controller/collectives/collective_scopes.h"
#include "controller/phases/node_state.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// launcher: mpirun — nccl-tests under OpenMPI, one launch per scope and
// operation (the same scopes the agents run: 1-node on each node, the
// 2-node pair, all nodes), its output parsed into the same sweep model as
// the agents' own sweep.
struct MpirunSweepResult {
  v1::CollectiveSweep sweep;
  std::string not_run;               // "skipped: <reason>" when mpirun is missing
  std::vector<std::string> command;  // the argv mpirun was given (empty when not built)
  std::string output;                // what the nccl-tests binary printed
  std::string error_output;          // mpirun's and the ranks' stderr
};

// The nccl-tests binary of a collectives.operations entry (sweep/
// collective_operation.h's names: all_reduce -> all_reduce_perf, ...):
// under collectives.nccl_tests_dir when the plan gives one, else the bare
// name, which OpenMPI looks up on each node's PATH.
std::string NcclTestsBinaryPath(const plan::Plan& plan, const std::string& operation);

// The host OpenMPI is given for a node: its agent's host (the management
// address the controller reaches it by; NCCL's own traffic is steered onto
// the data plane by the derived environment).
absl::StatusOr<std::string> MpirunHost(const plan::Node& node);

// One scope's command line, never run through a shell:
//   mpirun [--allow-run-as-root] [--hostfile H] --host h1:R1,h2:R2 --bind-to none
//     -np R1 -x NAME=VALUE... BINARY ARGS : -np R2 -x NAME=VALUE... BINARY ARGS
// One application context per node, in scope order, so each node's ranks get
// that node's NCCL environment (collective_job_spec.h's NcclEnvFor, the one
// the agents' workers get) and OpenMPI fills each host's slots in turn.
// ARGS: -b MIN -e MAX -f FACTOR -g 1 -w W -n I -c 1. An error when a
// variable fails the workers' allow-list (common/worker_env.h) or a node's
// agent gives no usable host; `as_root` adds --allow-run-as-root (OpenMPI
// refuses root otherwise).
absl::StatusOr<std::vector<std::string>> MpirunCommand(const plan::Plan& plan,
                                                       const std::vector<NodeState>& nodes,
                                                       const CollectiveScope& scope, bool as_root);

// What names the sweep before it runs: its scope, operation, backend,
// launcher, nodes and ranks; a resumed run finds a journaled sweep by it.
v1::CollectiveSweep MpirunSweepFrame(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                     const CollectiveScope& scope);

MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const CollectiveScope& scope, process::CommandRunner& runner,
                                 bool as_root);
// The live process runner; as root when the controller is.
MpirunSweepResult RunMpirunSweep(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                 const CollectiveScope& scope);

}  // namespace clustercert::controller
