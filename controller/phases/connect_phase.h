#pragma once

#include <vector>

#include "common/clock.h"
#include "controller/phases/node_state.h"
#include "controller/phases/progress.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// Phase 1: reach every agent with GetVersion, in rounds. A node that does not
// answer (UNAVAILABLE, DEADLINE_EXCEEDED) is retried in the next round, up to
// agents.retries times, with a short pause between rounds; other errors and
// an agent speaking another API version are final. Fills reachable, error,
// version and clock on each NodeState. Returns the number reachable.
// `clock` paces the retries and stamps the clock exchanges.
int RunConnectPhase(std::vector<NodeState>& nodes, const plan::AgentSettings& settings,
                    Progress& progress, Clock& clock);

}  // namespace clustercert::controller
