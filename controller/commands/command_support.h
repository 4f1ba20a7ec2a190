#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/client/agent_client.h"
#include "controller/phases/node_state.h"
#include "controller/phases/progress.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Exit status, as DESIGN.md promises scripts.
enum ExitCode : int {
  kExitCertified = 0,
  kExitNotCertified = 1,  // ran, but a check failed or a node was unreachable
  kExitUsage = 2,         // bad plan or command line; nothing ran
  kExitCannotRun = 3,     // no agent reachable, or an internal error
  // --slurm-drain: the certificate is written, but Slurm refused a drain or
  // resume; the verdict is the certificate's (docs/slurm.md).
  kExitSlurmFailed = 4,
};

// What every subcommand may be given on the command line.
struct CommandOptions {
  std::string out;           // --out: overrides the plan's certificate.out
  bool json = false;         // --json: machine-readable stdout
  bool color = false;        // resolved from --color and the terminal
  bool quiet = false;        // --quiet: no progress lines
  bool verbose = false;      // --verbose: run lists passing and skipped checks too
  double noise = 0.10;       // --noise: diff's relative band within which a change is noise
  std::string pubkey;        // --pubkey: verify against this public key
  std::string trust_dir;     // --trust-dir: verify trusts the *.pub keys in this directory
  std::string baseline;      // --baseline: certificate a partial re-certification starts from
  std::string only;          // --only: comma-separated nodes to measure again
  std::string resume;        // --resume: the directory of a killed run to continue
  std::string slurm_nodes;   // --slurm-nodes: a partition or hostlist; the nodes come from Slurm
  bool slurm_drain = false;  // --slurm-drain: drain failing nodes, resume those that pass again
  bool local = false;        // --local: health checks the node this host is
  std::string node;          // --node: health checks this node
};

// Makes the client for one plan node; gRPC in production, fakes in tests.
using ClientFactory =
    std::function<absl::StatusOr<std::unique_ptr<AgentClient>>(const plan::Node& node)>;

// Loads and validates the plan, printing "file:line:col: message" lines to
// stderr on failure.
std::optional<plan::Plan> LoadPlanOrReport(const std::string& path);

// The gRPC client factory for a plan's agents (credentials from the plan).
absl::StatusOr<ClientFactory> GrpcClientFactoryFor(const plan::Plan& plan);

// One NodeState per plan node, each with its client.
absl::StatusOr<std::vector<NodeState>> MakeNodeStates(const plan::Plan& plan,
                                                      const ClientFactory& factory);

// One NodeState per uplink agent target that gives its own agent address.
absl::StatusOr<std::vector<NodeState>> MakeSinkStates(const plan::Plan& plan,
                                                      const ClientFactory& factory);

// A validated plan with a client per node: what `run` and `inventory` start from.
struct PreparedRun {
  plan::Plan plan;
  std::vector<NodeState> nodes;
  // Uplink agent targets outside the plan's nodes (a storage host's agent),
  // each named by its target name.
  std::vector<NodeState> sinks;
};

// Turns the loaded plan into the one to run (run --slurm-nodes: the nodes
// Slurm lists); nullopt, once the refusal is diagnosed, with *exit_code set.
using PlanResolver = std::function<std::optional<plan::Plan>(plan::Plan plan, int* exit_code)>;

// Checks the arguments (exactly one: the plan), loads the plan (through
// `resolve` when given) and makes the clients (gRPC unless
// `factory_override` is given). On failure prints why (`usage` for bad
// arguments) and sets *exit_code (2 or 3). A plan with no nodes (a slurm
// plan run without --slurm-nodes) is refused.
std::optional<PreparedRun> PrepareRun(const std::vector<std::string>& args, const char* usage,
                                      const ClientFactory* factory_override, int* exit_code,
                                      const PlanResolver& resolve = nullptr);

}  // namespace clustercert::controller
