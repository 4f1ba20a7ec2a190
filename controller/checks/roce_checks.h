#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// roce.gid (error, roce only), per rail port: the GID at fabric.roce.gid_index
// exists, has type "RoCE v2" and is IPv4-mapped (ipv4 non-empty) — the GID
// NCCL_IB_GID_INDEX must name. A failure names the index that would work.
void AppendRoceGidChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
