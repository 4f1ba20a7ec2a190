#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "clustercert/v1/collective.pb.h"
#include "common/clock.h"
#include "controller/collectives/sweep_merge.h"
#include "controller/phases/node_state.h"

namespace clustercert::controller {

// One rank's stderr, kept for the transport log.
struct RankLog {
  std::string node;
  int rank = 0;
  std::vector<std::string> lines;
};

struct ScopeRunResult {
  bool ok = false;                       // every rank said done and exited 0
  std::string error;                     // the first reason it did not, as a sentence
  std::vector<RankRow> rows;             // every rank's rows
  std::vector<std::string> rank_errors;  // "node2 rank 3: <its error>"
  std::vector<std::string> notes;        // "node1 rank 0: transport tcp 10.0.0.1"
  std::vector<RankLog> logs;
};

struct ScopeRunSettings {
  std::string job_name;         // "collectives/2-node"
  absl::Duration job_timeout;   // what the agents enforce on the workers
  absl::Duration call_timeout;  // each gRPC call
  absl::Duration poll_interval = absl::Milliseconds(20);
  // After one rank fails, how long the others get to end by themselves (gloo
  // peers time out, and their errors help) before the job is stopped.
  absl::Duration failure_grace = absl::Seconds(10);
  uint32_t lease_s = 30;
  // Paces the polling and keeps the deadline and the grace.
  Clock* clock = &RealClock();
};

// Runs one scope through the agents: StartCollective on every node, then
// polls them all each `poll_interval`, relaying the rendezvous keys between
// nodes (StoreRelay), until every rank has exited, a rank failed and the
// grace ran out, an agent stopped answering, or the deadline passed; then
// stops every job. `on_row` sees each row as it arrives (from client
// threads, one call at a time). Never hangs: the controller's own deadline is
// job_timeout plus the grace.
ScopeRunResult RunScopeThroughAgents(const std::vector<NodeState*>& nodes,
                                     const std::vector<v1::CollectiveJobSpec>& specs,
                                     const ScopeRunSettings& settings,
                                     const std::function<void(const RankRow&)>& on_row);

}  // namespace clustercert::controller
