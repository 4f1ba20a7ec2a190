#include "controller/collectives/legacy_collective_verdicts.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/finding_builder.h"
#include "controller/collectives/collective_verdicts.h"

namespace clustercert::controller {
namespace {

using checks::FindingBuilder;
using checks::Severity;

constexpr double kCollapseFactorFormat3 = 3.0;

// As collective_verdicts.cc prints GB/s (the recorded messages must match).
std::string GBps(double value) {
  if (value >= 0.1 || value == 0) return absl::StrFormat("%.2f GB/s", value);
  return absl::StrFormat("%.4f GB/s", value);
}

}  // namespace

v1::Finding JudgeBusbwFormat3(const plan::Plan& plan, const v1::CollectiveSweep& sweep) {
  FindingBuilder builder("collectives.busbw", v1::Finding::error, "", sweep.scope());
  const double floor = plan.collectives.min_busbw_gbytes;
  if (floor <= 0) return builder.Skipped("the plan sets no collectives.min_busbw_gbytes");
  if (sweep.nodes_size() < 2) {
    return builder.Skipped(
        "the busbw floor is for sweeps between nodes; inside one node the "
        "bus is NVLink/PCIe or memory, not the fabric");
  }
  const std::string expected = absl::StrCat(">= ", GBps(floor));
  if (sweep.rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("the sweep produced no row"), "busbw", expected);
  }
  const std::string observed = absl::StrCat(GBps(sweep.large_busbw_gbytes()), " (best from ",
                                            sweep.large_from_bytes(), " B up)");
  if (sweep.large_busbw_gbytes() >= floor) {
    return builder.Pass(observed, expected,
                        absl::StrCat(builder.subject(), " allreduce busbw reached ",
                                     GBps(sweep.large_busbw_gbytes()),
                                     " at large sizes, plan "
                                     "floor ",
                                     GBps(floor), "."));
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " allreduce busbw is ", GBps(sweep.large_busbw_gbytes()),
                   " at large sizes, plan expects at least ", GBps(floor), "."),
      "Look at the pairwise matrix for the slow node or link first (the suspects section); if "
      "every pair is at line rate, check the transport line (NET/IB with GDRDMA expected), "
      "NCCL_IB_HCA naming every rail, and PFC/ECN on the RDMA priority.");
}

v1::Finding JudgeScalingFormat3(const plan::Plan& plan, const v1::CollectiveSweep* one_node,
                                const v1::CollectiveSweep* two_node) {
  FindingBuilder builder = ScalingFindingBuilder(plan, two_node);
  if (one_node == nullptr || two_node == nullptr) {
    return builder.Skipped("the 1-node and 2-node sweeps did not both run");
  }
  if (one_node->ranks() < 2) {
    return builder.Skipped(
        "the 1-node sweep has one rank, which moves nothing over a bus (run "
        "ranks_per_node >= 2 to compare)");
  }
  if (one_node->rows_size() == 0 || two_node->rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("a sweep produced no row"), "busbw ratio",
                           "a fall of less than 3x");
  }
  const double one = one_node->large_busbw_gbytes();
  const double two = two_node->large_busbw_gbytes();
  const std::string observed = absl::StrCat(GBps(one), " -> ", GBps(two));
  const std::string expected =
      absl::StrCat("2-node busbw > 1-node busbw / ", kCollapseFactorFormat3);
  if (two * kCollapseFactorFormat3 > one) {
    return builder.Pass(observed, expected,
                        absl::StrCat(builder.subject(), " busbw went from ", GBps(one), " to ",
                                     GBps(two), ": no collapse between nodes."));
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " busbw fell from ", GBps(one), " to ", GBps(two), " (",
                   absl::StrFormat("%.1f", two > 0 ? one / two : 0.0),
                   "x): a fall of 3x or more means RDMA is not used between nodes."),
      ScalingCollapseRemedy(plan, two_node));
}

}  // namespace clustercert::controller
