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

struct CollectivesOutcome {
  std::vector<v1::CollectiveSweep> sweeps;  // one per scope that was attempted
  std::vector<v1::Finding> checks;          // collectives.* findings
  std::vector<std::string> skipped;         // scopes left out, "scope: reason"
  // Set when the phase could not run at all (no GPU for nccl, no launcher):
  // "skipped: <reason>".
  std::string not_run;
};

// Phase 4: allreduce sweeps at 1 node, 2 nodes and all nodes (the plan's
// scopes), launched by the agents (ranks as worker processes, the rendezvous
// relayed by the controller) or, with launcher mpirun, by nccl-tests under
// OpenMPI, one mpirun per scope and operation. Prints each sweep in nccl-tests' layout as it
// completes. Once `stop` is requested no new sweep starts (the running ones end when their agents'
// calls are answered for them and their jobs are stopped). Each agent-launched sweep is appended to
// `journal` as it completes; on a resumed run the sweeps the journal holds are taken over, not run
// again.
CollectivesOutcome RunCollectivesPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                       Progress& progress, Clock& clock,
                                       const RerunScope* rerun = nullptr,
                                       const RunStop* stop = nullptr,
                                       PhaseJournal* journal = nullptr);

}  // namespace clustercert::controller
