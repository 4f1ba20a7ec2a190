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

// mtu.path (error), one per pairwise cell, from the path MTU each end
// recorded (PeerTestResult.path_mtu; node = the client, device = the rail):
//   an end's route to the other (IP_MTU, its netdev or `ip route ... mtu`)
//     below fabric.min_netdev_mtu (tcp and RoCE) -> fail naming that node's
//     route, and its failing mtu.netdev finding from `inventory_checks`
//   the route after a don't-fragment probe lower than before (a routed hop
//     answered ICMP fragmentation-needed) and below the plan -> fail naming
//     the hop between the two nodes
//   verbs: the QP's path MTU below fabric.active_mtu -> fail naming the end
//     whose port active_mtu is short (its netdev MTU on RoCE, the subnet
//     manager on InfiniBand)
//   A cell whose run failed or stalled is judged on the figures its ends
//   measured while connecting (ConnectEndpointResponse.path_mtu, carried
//   into client_result/server_result): a short route or QP fails it as
//   above; figures that fit the plan are unknown, not pass (no full-size
//   packet was shown to cross, and an L2 hop that drops silently is unseen).
//   neither end recorded a path MTU (no end connected, an older agent) or
//     no figure could be read -> unknown, never pass
v1::Finding JudgePathMtu(const plan::Plan& plan, const v1::PairResult& pair,
                         const std::vector<v1::Finding>& inventory_checks);

}  // namespace clustercert::controller::checks
