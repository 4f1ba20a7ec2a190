#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "common/clock.h"
#include "controller/phases/node_state.h"
#include "controller/phases/phase_journal.h"
#include "controller/phases/progress.h"
#include "controller/phases/rerun_scope.h"
#include "controller/phases/run_stop.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// What the uplink phase hands the certificate.
struct UplinkOutcome {
  v1::Uplink uplink;                // sizing and every run
  std::vector<v1::Finding> checks;  // uplink.sizing and uplink.throughput
};

// Phase 5: sizes the uplink against the workload (uplink_sizing.h), then
// from every reachable node, one node at a time (so the runs do not share
// the uplink), to each target, runs each of the plan's flow counts: http
// and tcp targets through the node's agent (RunUplinkFlows), agent targets
// as a tcp peer test brokered with the sink agent (`sinks`: node-agents
// outside the plan's nodes, by target name; plan nodes are their own
// sinks). Every call has a deadline, so a dead storage path is a failed
// run with its reason. A partial re-certification measures only its nodes
// and carries the other nodes' runs over. Each run goes to `journal` as it
// ends (not once the stop is requested); on a resumed run the runs the
// journal holds are taken over, not measured again.
UplinkOutcome RunUplinkPhase(std::vector<NodeState>& nodes, std::vector<NodeState>& sinks,
                             const plan::Plan& plan, Progress& progress, Clock& clock,
                             const RerunScope* rerun = nullptr, const RunStop* stop = nullptr,
                             PhaseJournal* journal = nullptr);

}  // namespace clustercert::controller
