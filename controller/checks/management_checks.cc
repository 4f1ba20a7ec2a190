#include "controller/checks/management_checks.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::checks {
namespace {

// Every netdev that carries the data plane, with what makes it one.
std::map<std::string, std::string> DataNetdevs(const CheckContext& context) {
  std::map<std::string, std::string> netdevs;
  for (const v1::RdmaDevice& device : context.inventory().rdma_devices()) {
    for (const v1::RdmaPort& port : device.ports()) {
      if (!port.netdev().empty()) {
        netdevs.emplace(port.netdev(),
                        absl::StrCat("RDMA netdev of ", device.name(), " port ", port.port()));
      }
    }
    if (!device.parent_netdev().empty()) {
      netdevs.emplace(device.parent_netdev(), absl::StrCat("parent of ", device.name()));
    }
  }
  for (const v1::Netdev& netdev : context.inventory().netdevs()) {
    if (!netdev.rdma_devices().empty()) {
      netdevs.emplace(netdev.name(), absl::StrCat("RDMA netdev of ", netdev.rdma_devices(0)));
    }
  }
  if (!context.is_rdma()) {
    if (const v1::Netdev* data = context.FindNetdevWithAddress(context.node().data_ip)) {
      netdevs.emplace(data->name(), absl::StrCat("data netdev with ", context.node().data_ip));
    }
  }
  return netdevs;
}

}  // namespace

void AppendManagementChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  const std::string& management = context.inventory().management_netdev();
  const std::string expected = "not a data-plane (RDMA) netdev";
  if (!context.plan().expect.management_separate) {
    findings.push_back(context.Builder("mgmt.separate", Severity::kError, management)
                           .Skipped("plan sets expect.management_separate: false (one-interface "
                                    "development box)"));
    return;
  }
  if (management.empty()) {
    findings.push_back(context.Builder("mgmt.separate", Severity::kError)
                           .Unknown(ExplainMissing(context.inventory(), {"management_netdev"}),
                                    "management netdev", expected));
    return;
  }
  FindingBuilder builder = context.Builder("mgmt.separate", Severity::kError, management);
  std::map<std::string, std::string> data = DataNetdevs(context);
  auto it = data.find(management);
  if (it == data.end()) {
    findings.push_back(builder.Pass(
        management, expected,
        absl::StrCat(builder.subject(), " carries the management address ",
                     context.inventory().management_address(),
                     " and no RDMA device, as the plan expects a separate management plane.")));
    return;
  }
  findings.push_back(builder.Fail(
      absl::StrCat(management, " (", it->second, ")"), expected,
      absl::StrCat(builder.subject(), " carries the management address ",
                   context.inventory().management_address(), " but is the ", it->second,
                   ", plan expects a separate management plane."),
      absl::StrCat("Keep a separate management plane (1 GbE, e.g. eno1) and point the node-agent's "
                   "listen address and SSH at it instead of ",
                   management,
                   ": you need SSH exactly when the RDMA fabric is broken, and debugging a RoCE "
                   "storm over the link that is storming is a mistake made exactly once.")));
}

}  // namespace clustercert::checks
