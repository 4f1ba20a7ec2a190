#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// mgmt.separate (error, every fabric): the netdev carrying the agent's
// management address is not the netdev of any RDMA port (any device, rail or
// not) nor, on an ethernet fabric, the netdev carrying the node's data_ip.
// Unknown when the agent could not name the management netdev.
// mgmt.subnet (error): the management address's subnet holds no address of
// this node's data netdevs and no plan node's data_ip. Unknown without the
// subnet. Both skipped when the plan sets expect.management_separate false.
void AppendManagementChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
