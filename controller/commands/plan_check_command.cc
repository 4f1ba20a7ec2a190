#include "controller/commands/plan_check_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::controller {

int RunPlanCheckCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (args.size() != 1) {
    std::fprintf(stderr, "usage: controller plan check PLAN.yaml\n");
    return kExitUsage;
  }
  auto plan = LoadPlanOrReport(args[0]);
  if (!plan) return kExitUsage;
  std::vector<std::string> phases = {"connect", "inventory"};
  if (plan->pairwise.enabled) phases.push_back("pairwise");
  if (plan->collectives.enabled) phases.push_back("collectives");
  if (plan->uplink.enabled) phases.push_back("uplink");
  if (options.json) {
    std::printf(
        "{\"plan\": \"%s\", \"valid\": true, \"cluster\": \"%s\", \"nodes\": %zu, "
        "\"sha256\": \"%s\"}\n",
        plan->path.c_str(), plan->cluster.c_str(), plan->nodes.size(), plan->sha256.c_str());
    return kExitCertified;
  }
  std::printf("%s: valid. Cluster %s, %zu node(s), fabric %s", plan->path.c_str(),
              plan->cluster.c_str(), plan->nodes.size(), plan::FabricTypeName(plan->fabric.type));
  if (plan->fabric.link_rate_gbps > 0) std::printf(" at %g Gb/s", plan->fabric.link_rate_gbps);
  std::printf("; phases: %s.\n", absl::StrJoin(phases, ", ").c_str());
  std::printf("sha256 %s\n", plan->sha256.c_str());
  return kExitCertified;
}

}  // namespace clustercert::controller
