#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"
#include "controller/checks/inventory_evaluation.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::checks {

// The routed fabric (the seed's BGP unnumbered Clos), judged from the
// agent's BgpState (FRR's vtysh). Whether a node is judged follows
// fabric.routing: `bgp` judges every node and fails one without a BGP
// instance; `auto` judges the nodes whose agent reports one and skips the
// others with the agent's reason; `l2` skips them all. Never a pass without
// the facts. An inventory with no BGP state at all (an agent before it, a
// certificate recorded then) gets no bgp.* finding unless the plan says
// `bgp`, so such certificates recompute as they were recorded.
//
// A node's fabric-facing interfaces are its rails' netdevs and the netdev
// that holds its data_ip, unless that is an address holder with no link of
// its own (lo, a dummy: operstate "unknown"), where unnumbered designs put
// the address. A node with none of these is judged on the interfaces FRR
// peers on.
//
//   bgp.neighbor (error), per fabric-facing interface: an unnumbered BGP
//     neighbour on it is Established (names the state seen otherwise).
//   bgp.prefixes (error), per interface with an Established neighbour: it
//     received at least one prefix.
//   bgp.announced (error), per node with a data_ip: a prefix the node
//     originates (network, redistribute) covers it.
void AppendBgpChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

//   bgp.router_id (error), per judged node: no other node reports the same
//     router-id. The id names the router in BGP's OPEN and in path
//     selection: two nodes sharing one can have sessions refused (Bad BGP
//     Identifier) and their paths taken for one router's. A fail names the
//     nodes sharing it.
std::vector<v1::Finding> EvaluateBgpRouterIds(const plan::Plan& plan,
                                              const std::vector<NodeEvidence>& nodes);

}  // namespace clustercert::controller::checks
