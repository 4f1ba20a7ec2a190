#include "controller/checks/node_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/checks/bgp_checks.h"
#include "controller/checks/check_context.h"
#include "controller/checks/clock_checks.h"
#include "controller/checks/finding_builder.h"
#include "controller/checks/host_checks.h"
#include "controller/checks/host_setting_checks.h"
#include "controller/checks/isolation_checks.h"
#include "controller/checks/management_checks.h"
#include "controller/checks/mtu_checks.h"
#include "controller/checks/nccl_env_checks.h"
#include "controller/checks/pcie_checks.h"
#include "controller/checks/port_checks.h"
#include "controller/checks/qos_checks.h"
#include "controller/checks/roce_checks.h"
#include "controller/checks/status_text.h"
#include "controller/checks/topology_checks.h"

namespace clustercert::controller::checks {

std::vector<v1::Finding> EvaluateNode(const plan::Plan& plan, const plan::Node& node,
                                      const v1::Inventory& inventory) {
  const CheckContext context(plan, node, inventory);
  std::vector<v1::Finding> findings;
  AppendStackChecks(context, findings);
  AppendPortChecks(context, findings);
  AppendSubnetManagerChecks(context, findings);
  AppendRoceGidChecks(context, findings);
  AppendMtuChecks(context, findings);
  AppendBgpChecks(context, findings);
  AppendQosChecks(context, findings);
  AppendGpuChecks(context, findings);
  AppendPcieChecks(context, findings);
  AppendHostSettingChecks(context, findings);
  AppendTopologyChecks(context, findings);
  AppendManagementChecks(context, findings);
  AppendIsolationChecks(context, findings);
  AppendClockChecks(context, findings);
  AppendNcclEnvChecks(context, findings);
  return findings;
}

bool BlocksCertification(const v1::Finding& finding) {
  return finding.severity() == v1::Finding::error &&
         (finding.status() == kFail || finding.status() == kUnknown);
}

int CountBlocking(const std::vector<v1::Finding>& findings) {
  int blocking = 0;
  for (const v1::Finding& finding : findings) blocking += BlocksCertification(finding) ? 1 : 0;
  return blocking;
}

std::string FindingSentence(const v1::Finding& finding) {
  const auto status = finding.status();
  if (status == kPass) return absl::StrCat("PASS ", finding.id(), ": ", finding.message());
  if (status == kSkipped) return absl::StrCat("SKIP ", finding.id(), ": ", finding.message());
  std::string label = status == kFail      ? "FAIL"
                      : status == kUnknown ? "UNKNOWN"
                                           : StatusText(status);
  std::string sentence = absl::StrCat(label, " ", finding.id(), " (",
                                      StatusText(finding.severity()), "): ", finding.message());
  if (!finding.remedy().empty()) absl::StrAppend(&sentence, " Remedy: ", finding.remedy());
  return sentence;
}

}  // namespace clustercert::controller::checks
