#include "controller/collectives/collective_verdicts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/non_finite.h"
#include "controller/checks/finding_builder.h"
#include "controller/collectives/gloo_devices.h"
#include "controller/collectives/legacy_collective_verdicts.h"

namespace clustercert::controller {
namespace {

using checks::FindingBuilder;
using checks::Severity;

// Enough digits for a lab's MB/s as well as a cluster's tens of GB/s.
std::string GBps(double value) {
  if (value >= 0.1 || value == 0) return absl::StrFormat("%.2f GB/s", value);
  return absl::StrFormat("%.4f GB/s", value);
}

// Why a sweep's figures are no measurement: a row or the large-message
// figure is NaN or infinite (inf clears every floor, NaN compares false with
// all). Empty when every figure is finite.
std::string InvalidSweep(const v1::CollectiveSweep& sweep, const std::string& subject) {
  for (const v1::CollectiveRow& row : sweep.rows()) {
    if (auto bad = FindNonFinite(row)) return NonFiniteSentence(subject, bad->field, bad->value);
  }
  if (!std::isfinite(sweep.large_busbw_gbytes())) {
    return NonFiniteSentence(subject, "large_busbw_gbytes", sweep.large_busbw_gbytes());
  }
  return "";
}

// Whether every figure of the sweep is finite: only those stand in a median
// or a comparison with other sweeps.
bool AllFinite(const v1::CollectiveSweep& sweep) { return InvalidSweep(sweep, "").empty(); }

bool IsNccl(const plan::Plan& plan) {
  return plan.collectives.backend == plan::CollectiveBackend::kNccl;
}

bool IsOneNode(const v1::CollectiveSweep& sweep) {
  return sweep.scope() == "1-node" && sweep.nodes_size() == 1;
}

// "alltoall" for a sweep of that operation; "allreduce" (the word findings
// always used) for all_reduce, so those findings read as they did.
std::string OperationWord(const v1::CollectiveSweep& sweep) {
  const std::string operation = OperationOf(sweep);
  return operation == "all_reduce" ? "allreduce" : operation;
}

// A scope's findings have the scope as device (with the operation after it
// for every operation but all_reduce: "2-node alltoall"); a 1-node sweep (one per node)
// also names its node, so each node's intra-node findings have their own key.
// (Certificates before format 4 had one 1-node sweep and no node there.)
FindingBuilder SweepBuilder(const char* id, Severity severity, const v1::CollectiveSweep& sweep,
                            uint32_t format = kCollectiveRulesFormat) {
  return FindingBuilder(id, severity, IsOneNode(sweep) && format >= 4 ? sweep.nodes(0) : "",
                        ScopeLabel(sweep));
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

v1::Finding JudgeRun(const v1::CollectiveSweep& sweep, uint32_t format) {
  FindingBuilder builder = SweepBuilder("collectives.run", v1::Finding::error, sweep, format);
  if (sweep.ok()) {
    return builder.Pass(
        absl::StrCat(sweep.ranks(), " rank(s) done, ", sweep.rows_size(), " size(s)"),
        "every rank runs the sweep to the end",
        absl::StrCat(builder.subject(), " ", OperationWord(sweep), " sweep ran on ", sweep.ranks(),
                     " rank(s) over ", sweep.nodes_size(), " node(s), ", sweep.rows_size(),
                     " size(s)."));
  }
  return builder.Fail(
      sweep.error(), "every rank runs the sweep to the end",
      absl::StrCat(builder.subject(), " ", OperationWord(sweep),
                   " sweep did not complete: ", sweep.error(), "."),
      "Read the rank errors in the certificate (collectives[].rank_errors): a rank that crashed "
      "or hung points at its node; check that every node reaches the others' data addresses, "
      "that the env (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) names interfaces that exist, then re-run.");
}

v1::Finding JudgeCorrectness(const v1::CollectiveSweep& sweep, uint32_t format) {
  FindingBuilder builder =
      SweepBuilder("collectives.correctness", v1::Finding::error, sweep, format);
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
    return builder.Unknown(
        checks::MissingBecause("no size was checked (the sweep produced no row)"), "result check",
        "#wrong 0 at every size");
  }
  if (wrong == 0) {
    return builder.Pass(
        "#wrong 0", "#wrong 0 at every size",
        absl::StrCat(builder.subject(), " ", OperationWord(sweep), " results held the expected ",
                     OperationOf(sweep) == "all_reduce"
                         ? "sum at every size, out-of-place and in-place."
                         : "values at every size."));
  }
  return builder.Fail(
      absl::StrCat("#wrong ", wrong), "#wrong 0 at every size",
      absl::StrCat(builder.subject(), " ", OperationWord(sweep), " results had ", wrong,
                   " wrong element(s) in all: data is corrupted on the way."),
      "Re-run the sweep; if #wrong stays above 0, run it on each node alone and look at that "
      "node's kernel log for GPU Xid or PCIe AER errors, and the NIC's port counters for "
      "symbol errors: reseat or replace what they point at.");
}

v1::Finding JudgeBusbw(const plan::Plan& plan, const v1::CollectiveSweep& sweep) {
  FindingBuilder builder = SweepBuilder("collectives.busbw", v1::Finding::error, sweep);
  if (sweep.nodes_size() < 2) {
    return builder.Skipped(
        "the busbw floor is for sweeps between nodes; inside one node the "
        "bus is NVLink/PCIe or memory, not the fabric");
  }
  const BusbwFloor floor = SweepFloor(plan, sweep);
  if (floor.gbytes <= 0) {
    return builder.Skipped(
        "no floor: set fabric.link_rate_gbps and the nodes' rails (the floor "
        "follows the rails), or collectives.min_busbw_gbytes");
  }
  const std::string expected = absl::StrCat(">= ", GBps(floor.gbytes), " (", floor.basis, ")");
  if (sweep.rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("the sweep produced no row"), "busbw", expected);
  }
  if (const std::string invalid = InvalidSweep(sweep, builder.subject()); !invalid.empty()) {
    return builder.Unknown(checks::MissingBecause(invalid), "busbw", expected);
  }
  const std::string observed = absl::StrCat(GBps(sweep.large_busbw_gbytes()), " (best from ",
                                            sweep.large_from_bytes(), " B up)");
  if (sweep.large_busbw_gbytes() >= floor.gbytes) {
    return builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), " ", OperationWord(sweep), " busbw reached ",
                     GBps(sweep.large_busbw_gbytes()), " at large sizes, floor ",
                     GBps(floor.gbytes), " (", floor.basis, ")."));
  }
  return builder.Fail(
      observed, expected,
      absl::StrCat(builder.subject(), " ", OperationWord(sweep), " busbw is ",
                   GBps(sweep.large_busbw_gbytes()), " at large sizes, expected at least ",
                   GBps(floor.gbytes), " (", floor.basis, ")."),
      "Look at the pairwise matrix for the slow node or rail first (the suspects section: a dead "
      "or half-rate rail shows there); if every pair is at line rate, check the transport line "
      "(NET/IB with GDRDMA expected), NCCL_IB_HCA naming every rail, and PFC/ECN on the RDMA "
      "priority.");
}

v1::Finding JudgeTransport(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                           const std::string& expected_gloo, uint32_t format) {
  FindingBuilder builder = SweepBuilder("collectives.transport", v1::Finding::error, sweep, format);
  if (!IsNccl(plan)) {
    // What the ranks' devices said they were; a certificate from before the
    // ranks reported it has none and keeps its rule (the transport field).
    if (sweep.gloo_devices_size() > 0) return JudgeGlooDevices(builder, sweep, expected_gloo);
    const std::string expected = absl::StrCat("gloo ", expected_gloo);
    if (sweep.transport().empty()) {
      return builder.Unknown(checks::MissingBecause("no rank reported its transport"), "transport",
                             expected);
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
    return builder.Fail(
        observed, expected,
        absl::StrCat(builder.subject(), " NCCL ran ", transport.net_socket_channels(),
                     " channel(s) over NET/Socket and ", transport.net_ib_channels(),
                     " over NET/IB, plan expects ", expected, " only."),
        remedy);
  }
  if (plan.expect.nvidia_peermem && transport.net_ib_gdr_channels() < transport.net_ib_channels()) {
    return builder.FailWith(
        v1::Finding::warning, observed, expected,
        absl::StrCat(builder.subject(), " NCCL used NET/IB but ",
                     transport.net_ib_channels() - transport.net_ib_gdr_channels(),
                     " channel(s) without GDRDMA: GPU data goes through host memory."),
        "Load nvidia_peermem (or use a DMA-BUF capable driver), keep each GPU and its NIC under "
        "one PCIe switch, and set NCCL_NET_GDR_LEVEL (e.g. PHB) in the plan's env.");
  }
  return builder.Pass(observed, expected,
                      absl::StrCat(builder.subject(), " NCCL used ", expected,
                                   " on every "
                                   "inter-node channel."));
}

}  // namespace

std::vector<v1::Finding> JudgeSweep(const plan::Plan& plan, const v1::CollectiveSweep& sweep,
                                    const std::string& expected_gloo_transport, uint32_t format) {
  return {JudgeRun(sweep, format), JudgeCorrectness(sweep, format),
          format >= 4 ? JudgeBusbw(plan, sweep) : JudgeBusbwFormat3(plan, sweep),
          JudgeTransport(plan, sweep, expected_gloo_transport, format)};
}

std::string ScopeLabel(const v1::CollectiveSweep& sweep) {
  const std::string operation = OperationOf(sweep);
  return operation == "all_reduce" ? sweep.scope() : absl::StrCat(sweep.scope(), " ", operation);
}

std::string SweepName(const v1::CollectiveSweep& sweep) {
  if (!IsOneNode(sweep)) return ScopeLabel(sweep);
  const std::string operation = OperationOf(sweep);
  return absl::StrCat("1-node ", sweep.nodes(0), operation == "all_reduce" ? "" : " ",
                      operation == "all_reduce" ? "" : operation);
}

bool FindingOfSweep(const v1::Finding& finding, const v1::CollectiveSweep& sweep) {
  if (finding.device() != ScopeLabel(sweep)) return false;
  // Certificates before format 4 name no node on a 1-node finding.
  return !IsOneNode(sweep) || finding.node().empty() || finding.node() == sweep.nodes(0);
}

BusbwFloor SweepFloor(const plan::Plan& plan, const v1::CollectiveSweep& sweep) {
  BusbwFloor floor;
  // What the slowest node's rails carry: rails x line rate / 8 (GB/s, the
  // unit of nccl-tests' busbw); a node without rails has its data link.
  const double rate = plan.fabric.link_rate_gbps;
  size_t rails = 0;
  for (const std::string& name : sweep.nodes()) {
    for (const plan::Node& node : plan.nodes) {
      if (node.name != name) continue;
      const size_t count = std::max<size_t>(node.rails.size(), 1);
      rails = rails == 0 ? count : std::min(rails, count);
    }
  }
  if (rate > 0 && rails > 0) floor.fabric_gbytes = static_cast<double>(rails) * rate / 8;
  if (plan.collectives.min_busbw_gbytes > 0) {
    floor.gbytes = plan.collectives.min_busbw_gbytes;
    floor.basis = "plan min_busbw_gbytes";
  } else if (floor.fabric_gbytes > 0) {
    floor.gbytes = plan.collectives.min_fraction_of_fabric * floor.fabric_gbytes;
    floor.basis =
        absl::StrCat(absl::StrFormat("%g", plan.collectives.min_fraction_of_fabric), " x ", rails,
                     " rail(s) x ", absl::StrFormat("%g", rate), " Gb/s / 8");
  }
  return floor;
}

std::vector<v1::Finding> JudgeSweeps(const plan::Plan& plan,
                                     const std::vector<v1::CollectiveSweep>& sweeps,
                                     uint32_t format) {
  std::vector<v1::Finding> checks;
  // The 1-node and 2-node sweeps of each operation, in the order they came.
  std::vector<std::string> operations;
  std::map<std::string, std::vector<const v1::CollectiveSweep*>> one_node;
  std::map<std::string, const v1::CollectiveSweep*> two_node;
  for (const auto& sweep : sweeps) {
    for (auto& finding : JudgeSweep(plan, sweep, sweep.expected_transport(), format)) {
      if (finding.id() == "collectives.busbw" &&
          (finding.status() == checks::kPass || finding.status() == checks::kFail)) {
        finding.set_has_value(true);
        finding.set_value(sweep.large_busbw_gbytes());
        finding.set_unit("GB/s");
        finding.set_threshold(format >= 4 ? SweepFloor(plan, sweep).gbytes
                                          : plan.collectives.min_busbw_gbytes);
      }
      checks.push_back(std::move(finding));
    }
    const std::string operation = OperationOf(sweep);
    if (std::find(operations.begin(), operations.end(), operation) == operations.end()) {
      operations.push_back(operation);
    }
    if (sweep.scope() == "1-node") one_node[operation].push_back(&sweep);
    if (sweep.scope() == "2-node") two_node[operation] = &sweep;
  }
  for (const std::string& operation : operations) {
    const std::vector<const v1::CollectiveSweep*>& ones = one_node[operation];
    const v1::CollectiveSweep* two = two_node[operation];
    if (format < 4) {
      if (!ones.empty() || two != nullptr) {
        checks.push_back(JudgeScalingFormat3(plan, ones.empty() ? nullptr : ones.front(), two));
      }
      continue;
    }
    for (auto& finding : JudgeIntraNode(plan, ones)) checks.push_back(std::move(finding));
    if (!ones.empty() || two != nullptr) checks.push_back(JudgeScaling(plan, ones, two, operation));
  }
  return checks;
}

std::vector<v1::Finding> JudgeIntraNode(const plan::Plan& plan,
                                        const std::vector<const v1::CollectiveSweep*>& one_node) {
  std::vector<v1::Finding> checks;
  std::vector<double> figures;
  for (const v1::CollectiveSweep* sweep : one_node) {
    if (sweep->ok() && sweep->rows_size() > 0 && sweep->ranks() >= 2 && AllFinite(*sweep)) {
      figures.push_back(sweep->large_busbw_gbytes());
    }
  }
  const double median = figures.empty() ? 0 : Median(figures);
  const double fraction = plan.collectives.min_fraction_of_median;
  // Host-memory gloo ranks share the CPU with everything else: a warning.
  const Severity severity = IsNccl(plan) ? v1::Finding::error : v1::Finding::warning;
  for (const v1::CollectiveSweep* sweep : one_node) {
    FindingBuilder builder = SweepBuilder("collectives.intra_node", severity, *sweep);
    if (sweep->ranks() < 2) {
      checks.push_back(
          builder.Skipped("one rank per node moves nothing over the node's bus "
                          "(run ranks_per_node >= 2)"));
      continue;
    }
    if (figures.size() < 3) {
      checks.push_back(builder.Skipped(
          absl::StrCat(figures.size(),
                       " node(s) have a 1-node figure; it takes 3 to tell which node is slow "
                       "(collectives.one_node: every-node on 3 or more nodes)")));
      continue;
    }
    const std::string expected =
        absl::StrCat(">= ", GBps(fraction * median), " (", absl::StrFormat("%g", fraction),
                     " x the median ", GBps(median), " of ", figures.size(), " nodes)");
    if (!sweep->ok() || sweep->rows_size() == 0) {
      checks.push_back(builder.Unknown(checks::MissingBecause("the node's 1-node sweep did not "
                                                              "complete (collectives.run)"),
                                       "intra-node busbw", expected));
      continue;
    }
    if (const std::string invalid = InvalidSweep(*sweep, builder.subject()); !invalid.empty()) {
      checks.push_back(
          builder.Unknown(checks::MissingBecause(invalid), "intra-node busbw", expected));
      continue;
    }
    v1::Finding finding;
    const double own = sweep->large_busbw_gbytes();
    if (own >= fraction * median) {
      finding = builder.Pass(
          GBps(own), expected,
          absl::StrCat(builder.subject(), " intra-node ", OperationWord(*sweep), " busbw ",
                       GBps(own), " is in line with the nodes' median ", GBps(median), "."));
    } else {
      finding = builder.Fail(
          GBps(own), expected,
          absl::StrCat(builder.subject(), " intra-node ", OperationWord(*sweep), " busbw is ",
                       GBps(own), absl::StrFormat(" (%.0f %%", 100 * own / median),
                       " of the nodes' median ", GBps(median),
                       "): this node's GPUs talk to each other slower than the "
                       "other nodes' do."),
          IsNccl(plan) ? "Run nvidia-smi topo -m and nvidia-smi nvlink -s on this node: a GPU "
                         "whose NVLinks are down or inactive falls back to PCIe; check the "
                         "NVSwitch fabric manager (systemctl status nvidia-fabricmanager), the "
                         "GPUs' PCIe link width, and PCIe ACS on the switches (pcie.acs)."
                       : "gloo's 1-node sweep runs on host memory and CPU: check this node for "
                         "other load, its CPU frequency governor and memory channels, then "
                         "re-run.");
    }
    finding.set_has_value(true);
    finding.set_value(own);
    finding.set_unit("GB/s");
    finding.set_threshold(fraction * median);
    checks.push_back(std::move(finding));
  }
  return checks;
}

namespace {

bool GlooOverTcp(const plan::Plan& plan, const v1::CollectiveSweep* two_node) {
  return !IsNccl(plan) && two_node != nullptr && two_node->transport() == "tcp";
}

}  // namespace

FindingBuilder ScalingFindingBuilder(const plan::Plan& plan, const v1::CollectiveSweep* two_node,
                                     const std::string& operation) {
  return FindingBuilder(
      "collectives.scaling",
      GlooOverTcp(plan, two_node) ? v1::Finding::warning : v1::Finding::error, "",
      operation == "all_reduce" ? "1-node -> 2-node" : "1-node -> 2-node " + operation);
}

std::string ScalingCollapseRemedy(const plan::Plan& plan, const v1::CollectiveSweep* two_node) {
  if (GlooOverTcp(plan, two_node)) {
    return "gloo over tcp moves inter-node data through the kernel's TCP stack; expect the fall "
           "on a plain Ethernet data plane, and use transport ibverbs where the nodes have RDMA "
           "devices.";
  }
  return "Check the transport line (NET/Socket means TCP), NCCL_IB_HCA and NCCL_IB_GID_INDEX in "
         "the plan's env, the RDMA ports' state and nvidia_peermem.";
}

v1::Finding JudgeScaling(const plan::Plan& plan,
                         const std::vector<const v1::CollectiveSweep*>& one_node,
                         const v1::CollectiveSweep* two_node, const std::string& operation) {
  FindingBuilder builder = ScalingFindingBuilder(plan, two_node, operation);
  if (two_node == nullptr) return builder.Skipped("the 2-node sweep did not run");
  // What the rails can carry: the plan's floor when it sets one, else the
  // rails' line rate. NVLink makes the 1-node figure many times larger than
  // any fabric, so it is reported, never compared.
  const BusbwFloor floor = SweepFloor(plan, *two_node);
  const double capacity =
      plan.collectives.min_busbw_gbytes > 0 ? floor.gbytes : floor.fabric_gbytes;
  const std::string basis = plan.collectives.min_busbw_gbytes > 0 ? "the plan's min_busbw_gbytes"
                                                                  : "what the rails carry";
  if (capacity <= 0) {
    return builder.Skipped(
        "no fabric capacity to compare with: set fabric.link_rate_gbps and "
        "the nodes' rails, or collectives.min_busbw_gbytes");
  }
  const std::string expected =
      absl::StrCat("2-node busbw > ", GBps(capacity), " (", basis, ") / ", kCollapseFactor);
  if (two_node->rows_size() == 0) {
    return builder.Unknown(checks::MissingBecause("the 2-node sweep produced no row"),
                           "2-node busbw", expected);
  }
  if (const std::string invalid = InvalidSweep(*two_node, builder.subject()); !invalid.empty()) {
    return builder.Unknown(checks::MissingBecause(invalid), "2-node busbw", expected);
  }
  std::vector<double> intra;
  for (const v1::CollectiveSweep* sweep : one_node) {
    if (sweep->rows_size() > 0 && AllFinite(*sweep)) {
      intra.push_back(sweep->large_busbw_gbytes());
    }
  }
  const std::string intra_text =
      intra.empty()
          ? "no 1-node figure"
          : absl::StrCat("1-node (intra-node) ", GBps(Median(intra)),
                         intra.size() > 1 ? absl::StrCat(" median of ", intra.size(), " nodes")
                                          : std::string());
  const double two = two_node->large_busbw_gbytes();
  const std::string observed = absl::StrCat("2-node ", GBps(two), "; ", intra_text);
  if (two * kCollapseFactor > capacity) {
    return builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), ": the 2-node busbw ", GBps(two), " is within 3x of ",
                     GBps(capacity), " (", basis, "): RDMA carries the traffic between nodes (",
                     intra_text, ", reported apart)."));
  }
  return builder.Fail(observed, expected,
                      absl::StrCat(builder.subject(), ": the 2-node busbw ", GBps(two), " is ",
                                   absl::StrFormat("%.1f", two > 0 ? capacity / two : 0.0),
                                   "x below ", GBps(capacity), " (", basis,
                                   "): a fall of 3x or more means RDMA is not used between nodes (",
                                   intra_text, ")."),
                      ScalingCollapseRemedy(plan, two_node));
}

}  // namespace clustercert::controller
