#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/cell_plan.h"  // CudaMemoryFor
#include "controller/pairwise/phase/cell_run.h"   // ProgressFromClient
#include "controller/phases/node_state.h"
#include "controller/phases/phase_journal.h"
#include "controller/phases/progress.h"
#include "controller/phases/rerun_scope.h"
#include "controller/phases/run_stop.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// What the pairwise phase hands the certificate.
struct PairwiseOutcome {
  std::vector<v1::PairResult> pairs;  // every cell, retests included
  std::vector<v1::Suspect> suspects;  // where the failing pairs point
  std::vector<v1::Finding> checks;    // each cell's verdict and the GPUDirect comparisons
  int rounds = 0;
  int failing = 0;
};

// Phase 3: runs the plan's pairwise tests on the schedule (no node in two
// tests at once), brokering each test: counters before, prepare both
// endpoints, connect each to the other, run both, close, counters after.
// Judges each cell, retests every failing pair once against partners that
// passed, and localises. A pair with an unreachable node is an error cell,
// never a skipped one. Once `stop` is requested no new cell or retest
// starts; the cells done so far are judged as usual. Every agent call is
// asynchronous and continues on one CallLoop on the caller's thread
// (RunCellChains): no thread per pair. Each judged cell is appended to
// `journal` as it ends (not once the stop is requested); on a resumed run
// the cells the journal holds are taken over, not measured again, and take
// part in retest planning and localisation as if measured now.
PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun = nullptr,
                                 const RunStop* stop = nullptr, PhaseJournal* journal = nullptr);

}  // namespace clustercert::controller
