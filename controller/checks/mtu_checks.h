#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// MTU, the seed's first suspect when bandwidth is low. Per rail port:
//   mtu.netdev (error, roce): the port's netdev MTU >= fabric.min_netdev_mtu.
//     On an ethernet fabric the data netdev is the one carrying the node's
//     data_ip (skipped when the plan gives none).
//   mtu.active (error, roce and infiniband): the port's active_mtu >=
//     fabric.active_mtu.
void AppendMtuChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
