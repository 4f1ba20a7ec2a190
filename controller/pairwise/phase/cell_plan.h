#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/schedule/pair_schedule.h"
#include "controller/phases/node_state.h"
#include "controller/phases/rerun_scope.h"
#include "controller/plan/plan.h"

// What the pairwise phase will run, decided before any call: the schedule's
// rounds (filtered for a partial re-certification), the cells each pair runs
// on a rail, the ends as the inventory describes them, and the baseline's
// cells carried over. Pure: no agent is called.

namespace clustercert::controller {

// One cell's test and memory.
struct TestItem {
  std::string test;
  std::string memory;      // host | cuda | cuda:N (the client's GPU)
  std::string server_gpu;  // cuda:N on the server; empty: its GPU nearest the rail
};

// The part of one node a pair test touches.
struct Side {
  NodeState* state = nullptr;
  std::string device;  // rail; empty for tcp
  std::string netdev;  // for the counters
  double rate_gbps = 0;
};

// The CUDA device nearest `rail` on `node` (the GPU whose PCIe relation to the
// NIC is closest, by the inventory's gpu_nic_paths) as "cuda:N" in the CUDA
// runtime's numbering, matched by PCI bus id; "cuda:0" when the inventory
// cannot tell. Memory "cuda" in the plan means this device on each end.
std::string CudaMemoryFor(const NodeState& node, const std::string& rail);

// The memory `role` ("client" | "server") of `item` uses on `side`: "host",
// the item's GPU, or the GPU nearest the side's rail.
std::string MemoryFor(const Side& side, const TestItem& item, const std::string& role);

// The class a verbs test's packets travel in, from the plan: on RoCE the GRH
// traffic class (plan::RoceTrafficClass: DSCP and ECN), on InfiniBand the
// service level (fabric.infiniband.service_level). The tcp engine leaves
// both 0 (the kernel picks its sockets' TOS), and an ethernet fabric has
// neither. Set on every spec of a peer test, and recorded on its result.
struct PlannedClass {
  std::optional<uint32_t> traffic_class;
  std::optional<uint32_t> service_level;
};
PlannedClass PlannedClassFor(const plan::Plan& plan);
void ApplyPlannedClass(const PlannedClass& planned, v1::PeerTestSpec& spec);

// The schedule's rounds; in a partial re-certification only the cells with a
// re-measured node at either end.
absl::StatusOr<std::vector<pairwise::schedule::Round>> ScheduleRounds(
    const plan::Plan& plan, const std::vector<NodeState>& nodes, const RerunScope* rerun);

// A partial re-certification keeps the baseline's cells between nodes it
// does not measure again, marked carried; appended to `pairs`.
void CarryBaselineCells(const RerunScope* rerun, std::vector<v1::PairResult>& pairs);

// What a pair of nodes runs on a rail (the plan's tests x memories; cuda
// cells per GPU nearest the rail), each end as a Side, and the line rate a
// pair is judged against (the slower end's port, else the plan's rate).
class CellPlanner {
 public:
  CellPlanner(const plan::Plan& plan, std::vector<NodeState>& nodes);

  bool tcp() const { return tcp_; }
  std::vector<TestItem> Cells(int client, int server, int rail) const;
  Side SideOf(int node, int rail) const;
  double LineRate(const Side& a, const Side& b) const;

 private:
  const std::string& RailName(int node, int rail) const {
    return nodes_[node].node.rails[static_cast<size_t>(rail)];
  }

  const plan::Plan& plan_;
  std::vector<NodeState>& nodes_;
  const bool tcp_;
  std::vector<TestItem> items_;
  std::vector<std::vector<v1::GpuRail>> gpu_maps_;
};

}  // namespace clustercert::controller
