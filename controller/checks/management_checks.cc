#include "controller/checks/management_checks.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/ip_subnet.h"

namespace clustercert::controller::checks {
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

// mgmt.subnet: the management subnet must not hold the data plane's
// addresses, or a data-plane fault (a RoCE storm, a flapping link) takes the
// path to SSH, BMC and NTP down with it.
v1::Finding SubnetFinding(const CheckContext& context) {
  const v1::Inventory& inventory = context.inventory();
  const std::string expected = "no data-plane address in the management subnet";
  FindingBuilder builder =
      context.Builder("mgmt.subnet", v1::Finding::error, inventory.management_netdev());
  std::optional<IpSubnet> management = IpSubnet::Parse(inventory.management_subnet());
  if (!management.has_value()) {
    return builder.Unknown(ExplainMissing(inventory, {"management_subnet", "management_netdev"}),
                           "management subnet", expected);
  }
  std::vector<std::string> clashes;
  for (const auto& [netdev, why] : DataNetdevs(context)) {
    const v1::Netdev* entry = context.FindNetdev(netdev);
    if (entry == nullptr) continue;
    for (const std::string& cidr : entry->cidrs()) {
      std::optional<IpSubnet> data = IpSubnet::Parse(cidr);
      if (data.has_value() && data->Overlaps(*management)) {
        clashes.push_back(absl::StrCat(netdev, " ", cidr, " (", why, ")"));
      }
    }
  }
  for (const plan::Node& node : context.plan().nodes) {
    if (!node.data_ip.empty() && management->Contains(node.data_ip)) {
      clashes.push_back(absl::StrCat(node.name, "'s data_ip ", node.data_ip));
    }
  }
  const std::string subnet = management->ToString();
  if (clashes.empty()) {
    return builder.Pass(subnet, expected,
                        absl::StrCat(builder.subject(), " carries management traffic on ", subnet,
                                     " through ", inventory.management_netdev(),
                                     ", a subnet that holds no data-plane address."));
  }
  return builder.Fail(
      absl::StrCat(subnet, " holds ", absl::StrJoin(clashes, ", ")), expected,
      absl::StrCat(builder.subject(), "'s management subnet ", subnet, " (",
                   inventory.management_netdev(), ") also holds ", absl::StrJoin(clashes, ", "),
                   ", plan expects the planes apart."),
      "Give the management plane its own subnet and interface (e.g. 192.168.100.0/24 on eno1) "
      "and the data plane another (e.g. 10.10.1.0/24 on the RDMA NICs): when the fabric fails "
      "you need SSH, the BMC and NTP on a path that does not depend on it.");
}

}  // namespace

void AppendManagementChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  const std::string& management = context.inventory().management_netdev();
  const std::string expected = "not a data-plane (RDMA) netdev";
  if (!context.plan().expect.management_separate) {
    findings.push_back(context.Builder("mgmt.separate", v1::Finding::error, management)
                           .Skipped("plan sets expect.management_separate: false (one-interface "
                                    "development box)"));
    findings.push_back(context.Builder("mgmt.subnet", v1::Finding::error, management)
                           .Skipped("plan sets expect.management_separate: false (one-interface "
                                    "development box)"));
    return;
  }
  findings.push_back(SubnetFinding(context));
  if (management.empty()) {
    findings.push_back(context.Builder("mgmt.separate", v1::Finding::error)
                           .Unknown(ExplainMissing(context.inventory(), {"management_netdev"}),
                                    "management netdev", expected));
    return;
  }
  FindingBuilder builder = context.Builder("mgmt.separate", v1::Finding::error, management);
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

}  // namespace clustercert::controller::checks
