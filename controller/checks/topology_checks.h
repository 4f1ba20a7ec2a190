#pragma once

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// topology.gpu_nic (error, roce/infiniband, when the plan lists GPUs and
// rails), per GPU function: its nearest rail NIC by gpu_nic_paths relation
// (PIX < PXB < PHB < NODE < SYS) is within expect.max_gpu_nic_relation and,
// when expect.gpu_nic_same_numa, is not SYS (another NUMA node).
void AppendTopologyChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

// 0 for PIX up to 4 for SYS; nullopt for anything else.
std::optional<int> RelationRank(absl::string_view relation);

}  // namespace clustercert::controller::checks
