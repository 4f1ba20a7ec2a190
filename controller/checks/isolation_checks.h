#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// The plan's other_fabrics kept apart from the training data plane (the
// seed: training and inference on separate fabrics, meeting only at an L3
// router), judged from what the agent answered in Inventory.isolation:
// isolation.routes (error): no route through a data netdev (the rails'
//   netdevs, the netdev holding data_ip) leads into another fabric's subnet,
//   a default route included, and no data netdev holds an address there.
// isolation.probe (error): no connect from a data netdev to a probe target
//   in another fabric was answered (connected or refused).
// Neither is made when the plan declares no other_fabrics; isolation.probe is
// skipped when no fabric names probe targets; both are unknown when the
// agent did not answer the query.
void AppendIsolationChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
