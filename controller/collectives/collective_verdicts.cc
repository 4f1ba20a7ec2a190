#include "controller/collectives/collective_verdicts.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller {
namespace {

using checks::FindingBuilder;
using checks::Severity;

// Enough digits for a lab's MB/s as well as a cluster's tens of GB/s.
std::string GBps(double value) {
  if (value >= 0.1 || value == 0) return absl::StrFormat("%.2f GB/s", value);
  return absl::StrFormat("%.4f GB/s", value);
}

bool IsNccl(const plan::Plan& plan) {
  return plan.collectives.backend == plan::CollectiveBackend::kNccl;
}

v1::Finding JudgeRun(const v1::CollectiveSweep& sweep) {
  FindingBuilder builder("collectives.run", Severity::kError, "", sweep.scope());
  if (sweep.ok()) {
    return builder.Pass(absl::StrCat(sweep.ranks(), " rank(s) done, ", sweep.rows_size(), " size(s)"),
                        "every rank runs the sweep to the end",
                        absl::StrCat(builder.subject(), " allreduce sweep ran on ", sweep.ranks(),
                                     " rank(s) over ", sweep.nodes_size(), " node(s), ",
                                     sweep.rows_size(), " size(s)."));
  }
  return builder.Fail(
      sweep.error(), "every rank runs the sweep to the end",
      absl::StrCat(builder.subject(), " allreduce sweep did not complete: ", sweep.error(), "."),
      "Read the rank errors in the certificate (collectives[].rank_errors): a rank that crashed "
      "or hung points at its node; check that every node reaches the others' data addresses, "
      "that the env (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) names interfaces that exist, then re-run.");
}

v1::Finding JudgeCorrectness(const v1::CollectiveSweep& sweep) {
  FindingBuilder builder("collectives.correctness", Severity::kError, "", sweep.scope());
  int64_t wrong = 0;
  bool checked = false;
  for (const v1::CollectiveRow& row : sweep.rows()) {
    if (row.oop_wrong() >= 0) {
      checked = true;
      wrong += row.oop_wrong();
    }
    if (row.has_in_place() && row.ip_wrong() >= 0) {
      checked = true;
      wrong += row.ip_wrong();
    }
  }
  if (!checked) {
    return builder.Unknown(checks::MissingBecause("no size was checked (the sweep produced no row)"),
                           "result check", "#wrong 0 at every size");
  }
  if (wrong == 0) {
    return builder.Pass("#wrong 0", "#wrong 0 at every size",
                        absl::StrCat(builder.subject(), " allreduce results held the expected sum "
                                                        "at every size, out-of-place and in-place."));
  }
  return builder.Fail(
      absl::StrCat("#wrong ", wrong), "#wrong 0 at every size",
      absl::StrCat(builder.subject(), " allreduce results had ", wrong,
                   " wrong element(s) in all: data is corrupted on the way."),
      "Re-run the sweep; if #wrong stays above 0, run it on each node alone and look at that "
      "node's kernel log for GPU Xid or PCIe AER errors, and the NIC's port counters for "
      "symbol errors: reseat or replace what they point at.");
}

v1::Finding JudgeBusbw(const plan::Plan& plan, const v1::CollectiveSweep& sweep) {
  FindingBuilder builder("collectives.busbw", Severity::kError, "", sweep.scope());
  const double floor = plan.collectives.min_busbw_gbytes;
  if (floor <= 0) return builder.Skipped("the plan sets no collectives.min_busbw_gbytes");
  if (sweep.nodes_size() < 2) {
    return builder.Skipped("the busbw floor is for sweeps between nodes; inside one node the "
                           "bus is NVLink/PCIe or memory, not the fabric");
  }
  const std::string expected = absl::StrCat(">= ", GBps(floor));
  if (sweep.rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("the sweep produced no row"), "busbw", expected);
  }
  const std::string observed =
      absl::StrCat(GBps(sweep.large_busbw_gbytes()), " (best from ", sweep.large_from_bytes(), " B up)");
  if (sweep.large_busbw_gbytes() >= floor) {
    return builder.Pass(observed, expected,
                        absl::StrCat(builder.subject(), " allreduce busbw reached ",
                                     GBps(sweep.large_busbw_gbytes()), " at large sizes, plan "
                                     "floor ", GBps(floor), "."));
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " allreduce busbw is ", GBps(sweep.large_busbw_gbytes()),
                   " at large sizes, plan expects at least ", GBps(floor), "."),
      "Look at the pairwise matrix for the slow node or link first (the suspects section); if "
      "every pair is at line rate, check the transport line (NET/IB with GDRDMA expected), "
      "NCCL_IB_HCA naming every rail, and PFC/ECN on the RDMA priority.");
}

v1::Finding JudgeTransport(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                           const std::string& expected_gloo) {
  FindingBuilder builder("collectives.transport", Severity::kError, "", sweep.scope());
  if (!IsNccl(plan)) {
    const std::string expected = absl::StrCat("gloo ", expected_gloo);
    if (sweep.transport().empty()) {
      return builder.Unknown(checks::MissingBecause("no rank reported its transport"),
                             "transport", expected);
    }
    if (sweep.transport() == expected_gloo) {
      return builder.Pass(absl::StrCat("gloo ", sweep.transport()), expected,
                          absl::StrCat(builder.subject(), " ranks used gloo's ", sweep.transport(),
                                       " transport on the data plane, as planned."));
    }
    return builder.Fail(absl::StrCat("gloo ", sweep.transport()), expected,
                        absl::StrCat(builder.subject(), " ranks used gloo's ", sweep.transport(),
                                     " transport, plan expects ", expected_gloo, "."),
                        "Set collectives.transport to the transport the nodes can run, or fix "
                        "the rail the plan names so ibverbs can open it.");
  }
  if (sweep.nodes_size() < 2) {
    return builder.Skipped("no network transport inside one node (NCCL uses P2P/SHM there)");
  }
  const v1::CollectiveTransport& transport = sweep.nccl_transport();
  const std::string expected = plan.expect.nvidia_peermem ? "NET/IB with GDRDMA" : "NET/IB";
  const std::string observed = absl::StrCat(
      "NET/IB ", transport.net_ib_channels(), " (GDRDMA ", transport.net_ib_gdr_channels(),
      "), NET/Socket ", transport.net_socket_channels(), " channel(s)",
      transport.network().empty() ? "" : absl::StrCat(", network ", transport.network()));
  if (transport.net_ib_channels() == 0 && transport.net_socket_channels() == 0 &&
      transport.network().empty()) {
    return builder.Unknown(checks::MissingBecause("NCCL's INFO log has no channel line (was "
                                                  "NCCL_DEBUG overridden in the plan's env?)"),
                           "transport", expected);
  }
  const std::string remedy =
      "NCCL fell back to TCP sockets: check that NCCL_IB_HCA names the rails (mlx5_0,...), "
      "NCCL_IB_GID_INDEX the RoCE v2 GID, that the RDMA devices are ACTIVE, and that "
      "nvidia_peermem is loaded; the rank logs in the certificate show NCCL's reason.";
  if (transport.net_socket_channels() > 0 || transport.net_ib_channels() == 0) {
    return builder.Fail(observed, expected,
                        absl::StrCat(builder.subject(), " NCCL ran ", transport.net_socket_channels(),
                                     " channel(s) over NET/Socket and ", transport.net_ib_channels(),
                                     " over NET/IB, plan expects ", expected, " only."),
                        remedy);
  }
  if (plan.expect.nvidia_peermem && transport.net_ib_gdr_channels() < transport.net_ib_channels()) {
    return builder.FailWith(
        Severity::kWarning, observed, expected,
        absl::StrCat(builder.subject(), " NCCL used NET/IB but ",
                     transport.net_ib_channels() - transport.net_ib_gdr_channels(),
                     " channel(s) without GDRDMA: GPU data goes through host memory."),
        "Load nvidia_peermem (or use a DMA-BUF capable driver), keep each GPU and its NIC under "
        "one PCIe switch, and set NCCL_NET_GDR_LEVEL (e.g. PHB) in the plan's env.");
  }
  return builder.Pass(observed, expected,
                      absl::StrCat(builder.subject(), " NCCL used ", expected, " on every "
                                   "inter-node channel."));
}

}  // namespace

std::vector<v1::Finding> JudgeSweep(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                                    const std::string& expected_gloo_transport) {
  return {JudgeRun(sweep), JudgeCorrectness(sweep), JudgeBusbw(plan, sweep),
          JudgeTransport(plan, sweep, expected_gloo_transport)};
}

std::vector<v1::Finding> JudgeSweeps(const plan::Plan& plan,
                                     const std::vector<v1::CollectiveSweep>& sweeps) {
  std::vector<v1::Finding> checks;
  const v1::CollectiveSweep* one_node = nullptr;
  const v1::CollectiveSweep* two_node = nullptr;
  for (const auto& sweep : sweeps) {
    for (auto& finding : JudgeSweep(plan, sweep, sweep.expected_transport())) {
      if (finding.id() == "collectives.busbw" &&
          (finding.status() == checks::kPass || finding.status() == checks::kFail)) {
        finding.set_has_value(true);
        finding.set_value(sweep.large_busbw_gbytes());
        finding.set_unit("GB/s");
        finding.set_threshold(plan.collectives.min_busbw_gbytes);
      }
      checks.push_back(std::move(finding));
    }
    if (sweep.scope() == "1-node") one_node = &sweep;
    if (sweep.scope() == "2-node") two_node = &sweep;
  }
  if (one_node != nullptr || two_node != nullptr) {
    checks.push_back(JudgeScaling(plan, one_node, two_node));
  }
  return checks;
}

v1::Finding JudgeScaling(const plan::Plan& plan, const v1::CollectiveSweep* one_node,
                         const v1::CollectiveSweep* two_node) {
  const bool gloo_tcp = !IsNccl(plan) && two_node != nullptr && two_node->transport() == "tcp";
  FindingBuilder builder("collectives.scaling", gloo_tcp ? Severity::kWarning : Severity::kError,
                         "", "1-node -> 2-node");
  if (one_node == nullptr || two_node == nullptr) {
    return builder.Skipped("the 1-node and 2-node sweeps did not both run");
  }
  if (one_node->ranks() < 2) {
    return builder.Skipped("the 1-node sweep has one rank, which moves nothing over a bus (run "
                           "ranks_per_node >= 2 to compare)");
  }
  if (one_node->rows_size() == 0 || two_node->rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("a sweep produced no row"), "busbw ratio",
                           "a fall of less than 3x");
  }
  const double one = one_node->large_busbw_gbytes();
  const double two = two_node->large_busbw_gbytes();
  const std::string observed = absl::StrCat(GBps(one), " -> ", GBps(two));
  const std::string expected = absl::StrCat("2-node busbw > 1-node busbw / ", kCollapseFactor);
  if (two * kCollapseFactor > one) {
    return builder.Pass(observed, expected,
                        absl::StrCat(builder.subject(), " busbw went from ", GBps(one), " to ",
                                     GBps(two), ": no collapse between nodes."));
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " busbw fell from ", GBps(one), " to ", GBps(two), " (",
                   absl::StrFormat("%.1f", two > 0 ? one / two : 0.0),
                   "x): a fall of 3x or more means RDMA is not used between nodes."),
      gloo_tcp ? "gloo over tcp moves inter-node data through the kernel's TCP stack; expect the "
                 "fall on a plain Ethernet data plane, and use transport ibverbs where the "
                 "nodes have RDMA devices."
               : "Check the transport line (NET/Socket means TCP), NCCL_IB_HCA and "
                 "NCCL_IB_GID_INDEX in the plan's env, the RDMA ports' state and nvidia_peermem.");
}

}  // namespace clustercert::controller
