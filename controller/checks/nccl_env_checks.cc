#include "controller/checks/nccl_env_checks.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace clustercert::controller::checks {
namespace {

// NCCL_IB_HCA's device names: "=" (exact) and ":port" suffixes dropped.
std::set<std::string> HcaNames(absl::string_view value) {
  absl::ConsumePrefix(&value, "=");
  std::set<std::string> names;
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    names.insert(std::string(item.substr(0, item.find(':'))));
  }
  return names;
}

// Whether NCCL would take `value` to name what `derived` names.
bool Agrees(const std::string& name, const std::string& value, const std::string& derived) {
  if (name == "NCCL_IB_HCA") return HcaNames(value) == HcaNames(derived);
  if (name == "NCCL_SOCKET_IFNAME") {
    const std::string wanted(absl::StripPrefix(derived, "="));
    if (absl::StartsWith(value, "=")) return value.substr(1) == wanted;
    // Without "=" NCCL matches by prefix: "eno" selects eno1.
    for (absl::string_view prefix : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
      if (absl::StartsWith(wanted, prefix)) return true;
    }
    return false;
  }
  return value == derived;
}

std::string Remedy(const std::string& name, const std::string& derived) {
  return absl::StrCat(
      "Remove ", name, " from collectives.env (clustercert sets ", name, "=", derived,
      " from the plan), or correct it to ", derived,
      "; the plan's rails, fabric.roce, fabric.infiniband and the data netdev are the source "
      "of truth.");
}

// The data-plane netdev NCCL's sockets (bootstrap, and NET/Socket should IB
// fail) may use: the one holding the node's data_ip, else the first rail's
// netdev (RoCE); never the management interface, which collectives do not
// ride.
std::string DataNetdev(const plan::Plan& plan, const plan::Node& node,
                       const v1::Inventory& inventory) {
  const CheckContext context(plan, node, inventory);
  if (const v1::Netdev* netdev = context.FindNetdevWithAddress(node.data_ip)) return netdev->name();
  if (node.rails.empty()) return "";
  const v1::RdmaDevice* rail = context.FindDevice(node.rails.front());
  if (rail == nullptr || rail->ports_size() == 0) return "";
  return rail->ports(0).netdev();
}

}  // namespace

std::map<std::string, std::string> DerivedNcclEnv(const plan::Plan& plan, const plan::Node& node,
                                                  const v1::Inventory* inventory) {
  std::map<std::string, std::string> env;
  if (plan.fabric.type == plan::FabricType::kEthernet) return env;
  if (!node.rails.empty()) env["NCCL_IB_HCA"] = absl::StrCat("=", absl::StrJoin(node.rails, ","));
  if (plan.fabric.type == plan::FabricType::kInfiniband) {
    // The SL the verbs tests send on; NCCL's QPs would otherwise take SL 0
    // and ride whichever virtual lane the subnet manager maps that to.
    env["NCCL_IB_SL"] = absl::StrCat(plan.fabric.infiniband.service_level);
  }
  if (plan.fabric.type == plan::FabricType::kRoce) {
    const plan::RoceSettings& roce = plan.fabric.roce;
    env["NCCL_IB_GID_INDEX"] = absl::StrCat(roce.gid_index);
    env["NCCL_IB_TC"] = absl::StrCat((roce.dscp << 2) | (roce.ecn ? 2 : 0));
  }
  if (inventory != nullptr) {
    const std::string netdev = DataNetdev(plan, node, *inventory);
    if (!netdev.empty()) env["NCCL_SOCKET_IFNAME"] = absl::StrCat("=", netdev);
  }
  return env;
}

void AppendNcclEnvChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  const plan::Plan& plan = context.plan();
  if (!plan.collectives.enabled || plan.collectives.backend != plan::CollectiveBackend::kNccl) {
    return;
  }
  const std::map<std::string, std::string> derived =
      DerivedNcclEnv(plan, context.node(), &context.inventory());
  if (derived.empty()) return;
  bool any = false;
  for (const auto& [name, wanted] : derived) {
    auto it = plan.collectives.env.find(name);
    if (it == plan.collectives.env.end() || Agrees(name, it->second, wanted)) continue;
    any = true;
    const bool breaks_rdma = name == "NCCL_IB_HCA" || name == "NCCL_IB_GID_INDEX";
    FindingBuilder builder = context.Builder(
        "collectives.env", breaks_rdma ? v1::Finding::error : v1::Finding::warning, name);
    findings.push_back(builder.Fail(
        absl::StrCat(name, "=", it->second), absl::StrCat(name, "=", wanted),
        absl::StrCat(builder.subject(), ": the plan's collectives.env sets ", name, "=", it->second,
                     " but the plan itself implies ", wanted,
                     breaks_rdma ? ": NCCL would leave a rail idle or use the wrong GID."
                                 : ": NCCL's traffic would leave the planned class or network."),
        Remedy(name, wanted)));
  }
  if (any) return;
  std::vector<std::string> pairs;
  for (const auto& [name, wanted] : derived) pairs.push_back(absl::StrCat(name, "=", wanted));
  FindingBuilder builder = context.Builder("collectives.env", v1::Finding::error);
  findings.push_back(builder.Pass(
      absl::StrJoin(pairs, " "), "the env the plan implies",
      absl::StrCat(builder.subject(), " NCCL ranks run with ", absl::StrJoin(pairs, " "), ".")));
}

}  // namespace clustercert::controller::checks
