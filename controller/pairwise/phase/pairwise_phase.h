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
// starts; the cells done so far are judged as usual.
// The CUDA device nearest `rail` on `node` (the GPU whose PCIe relation to the
// NIC is closest, by the inventory's gpu_nic_paths) as "cuda:N" in the CUDA
// runtime's numbering, matched by PCI bus id; "cuda:0" when the inventory
// cannot tell. Memory "cuda" in the plan means this device on each end.
std::string CudaMemoryFor(const NodeState& node, const std::string& rail);

// Whose byte counter shows a bandwidth test's live progress: the client's for
// verbs RDMA writes and reads (it posts them; the passive server sees no
// completions), the server's (the receiver) for sends and every tcp test.
bool ProgressFromClient(plan::PairwiseEngine engine, const std::string& test);

PairwiseOutcome RunPairwisePhase(std::vector<NodeState>& nodes, const plan::Plan& plan,
                                 const std::vector<v1::Finding>& inventory_checks,
                                 Progress& progress, const RerunScope* rerun = nullptr,
                                 const RunStop* stop = nullptr);

}  // namespace clustercert::controller
