#include "controller/checks/cluster_checks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert::controller::checks {
namespace {

v1::Finding Base(const std::string& id, const std::string& node) {
  v1::Finding finding;
  finding.set_id(id);
  finding.set_node(node);
  finding.set_severity(v1::Finding::error);
  return finding;
}

std::string Millis(absl::Duration d) {
  return absl::StrFormat("%.3f ms", absl::ToDoubleMilliseconds(d));
}

}  // namespace

v1::Finding ReachabilityFinding(const plan::Node& node, bool reachable, const std::string& error) {
  v1::Finding finding = Base("connect.reachable", node.name);
  finding.set_device(node.agent);
  finding.set_expected("agent answers");
  if (reachable) {
    finding.set_status(v1::Finding::pass);
    finding.set_observed("answered");
    finding.set_message(absl::StrCat(node.name, " agent at ", node.agent, " answered."));
    return finding;
  }
  finding.set_status(v1::Finding::fail);
  finding.set_observed("unreachable");
  finding.set_message(absl::StrCat(node.name, " is unreachable: ", error, "."));
  finding.set_remedy(absl::StrCat(
      "Start the agent on ", node.name,
      " (systemctl start clustercert-agent), check it listens on ", node.agent,
      " and that the management network reaches it; the node counts as failed until it answers."));
  return finding;
}

v1::Finding InventoryCollectedFinding(const plan::Node& node, const std::string& error) {
  v1::Finding finding = Base("inventory.collected", node.name);
  finding.set_expected("inventory returned");
  if (error.empty()) {
    finding.set_status(v1::Finding::pass);
    finding.set_observed("returned");
    finding.set_message(absl::StrCat(node.name, " returned its inventory."));
    return finding;
  }
  finding.set_status(v1::Finding::fail);
  finding.set_observed("failed");
  finding.set_message(absl::StrCat(node.name, " could not return its inventory: ", error, "."));
  finding.set_remedy(absl::StrCat("Read the agent's log on ", node.name,
                                  " (journalctl -u clustercert-agent) and rerun; a timeout means "
                                  "sysfs or a driver call hung on that host."));
  return finding;
}

v1::Finding ClockOffsetFinding(const plan::Plan& plan,
                               const std::vector<NodeClockOffset>& samples) {
  v1::Finding finding = Base("clock.offset", "");
  const double limit_ms = absl::ToDoubleMilliseconds(plan.expect.clock_offset);
  finding.set_expected(absl::StrFormat("spread <= %g ms", limit_ms));
  if (plan.nodes.size() < 2) {
    finding.set_status(v1::Finding::skipped);
    finding.set_message("The plan has one node: there is no offset between nodes to measure.");
    return finding;
  }
  if (samples.size() < 2) {
    finding.set_status(v1::Finding::unknown);
    finding.set_observed(absl::StrCat("unknown: ", samples.size(), " node clock(s) sampled"));
    finding.set_message("The clock offset between nodes needs at least two reachable nodes.");
    finding.set_remedy("Bring the unreachable nodes back and rerun.");
    return finding;
  }
  auto [lo, hi] = std::minmax_element(
      samples.begin(), samples.end(),
      [](const NodeClockOffset& a, const NodeClockOffset& b) { return a.offset < b.offset; });
  const absl::Duration spread = hi->offset - lo->offset;
  const absl::Duration uncertainty = hi->uncertainty + lo->uncertainty;
  finding.set_observed(absl::StrCat(Millis(spread), " (+/- ", Millis(uncertainty), ")"));
  const absl::Duration limit = absl::Milliseconds(limit_ms);
  const std::string between = absl::StrCat(hi->node, " and ", lo->node);
  if (spread - uncertainty > limit) {
    finding.set_status(v1::Finding::fail);
    finding.set_device(between);
    finding.set_message(absl::StrCat("The clocks of ", between, " differ by ", Millis(spread),
                                     ", more than the plan's ", limit_ms, " ms."));
    finding.set_remedy(
        "Synchronise every node to the same NTP source on the management network (chrony); clock "
        "drift is invisible until distributed training starts producing wrong gradients.");
  } else {
    finding.set_status(v1::Finding::pass);
    finding.set_message(absl::StrCat("The node clocks agree within ", Millis(spread), " (limit ",
                                     limit_ms, " ms)."));
  }
  return finding;
}

}  // namespace clustercert::controller::checks
