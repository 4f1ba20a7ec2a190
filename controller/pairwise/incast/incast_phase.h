#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/phases/node_state.h"
#include "controller/phases/progress.h"
#include "controller/phases/rerun_scope.h"
#include "controller/phases/run_stop.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// What the incast rounds hand the certificate.
struct IncastOutcome {
  std::vector<v1::IncastResult> rounds;  // measured now, then those carried from a baseline
  std::vector<v1::Finding> checks;       // each round's pairwise::JudgeIncast
  // Why no round could run ("" when they ran, or the plan has no
  // pairwise.incast): the certificate's SkippedTest for "incast".
  std::string skipped;
};

// pairwise.incast, run after the pairwise matrix (same phase): the rounds
// of BuildIncastRounds, one after another, each k senders writing into one
// receiver's rail at once (RunIncastRounds). Once `stop` is requested no
// new round starts. In a partial re-certification only the rounds with a
// re-measured node (receiver or sender) run; the baseline's rounds without
// one are taken over, marked carried. Rounds are not journaled: a resumed
// run (--resume) measures them again.
IncastOutcome RunIncastPhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                             Progress& progress, const RerunScope* rerun = nullptr,
                             const RunStop* stop = nullptr);

}  // namespace clustercert::controller
