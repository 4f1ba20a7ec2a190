#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/phase/cell_plan.h"
#include "controller/phases/node_state.h"

namespace clustercert::controller {

// At most this many retests per run: a cluster whose every cell fails is
// localised by its first retests; more would only lengthen the run.
inline constexpr size_t kMaxRetests = 64;

// One retest to run: an end of a failing cell (the client) against a
// partner (the server) on the cell's rail, with the cell's test and memory
// (a cuda cell keeps its GPU, against the partner's GPU nearest the rail).
struct PlannedRetest {
  int node = -1;
  int partner = -1;
  int rail = -1;          // -1 for tcp
  TestItem item;          // server_gpu empty
  std::string retest_of;  // "client->server" of the failing cell
};

// The nodes a failing cell's ends are retested against: reachable, still
// answering, more than half of their judged cells passed; best pass
// fraction first.
std::vector<int> RetestPartners(const std::vector<NodeState>& nodes,
                                const std::vector<v1::PairResult>& pairs);

// Each end of each failing cell in `pairs` once (per end, rail, test and
// memory) against the partner with the best pass record, so that a bad
// endpoint fails again and a bad link passes; an end that no longer
// answers, lacks the rail, or has no partner but the cell's other end is
// not retested. Pure: decided from the judged cells before any runs.
std::vector<PlannedRetest> PlanRetests(const std::vector<NodeState>& nodes, bool tcp,
                                       const std::vector<v1::PairResult>& pairs);

}  // namespace clustercert::controller
