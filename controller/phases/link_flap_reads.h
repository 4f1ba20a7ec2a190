#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/flap_checks.h"
#include "controller/phases/node_state.h"
#include "controller/phases/rerun_scope.h"
#include "controller/plan/plan.h"

// The two reads port.flap compares: every rail port's counters right after
// the inventory and again after the last phase, every node at once, through
// the agents' ReadPortCounters.
namespace clustercert::controller {

// One rail port the run watches for flaps.
struct FlapPort {
  size_t node = 0;     // index into the run's nodes
  std::string rail;    // the plan's rail; the data netdev on fabric.type ethernet
  std::string device;  // the RDMA device (port 1); empty on fabric.type ethernet
  std::string netdev;  // from the inventory; empty on InfiniBand
};

// Each answering node's rail ports (with its inventory): every plan rail on
// RoCE and InfiniBand, its netdev from the inventory's first port of the
// device; on fabric.type ethernet the netdev holding the node's data_ip
// (its inventory's addresses or cidrs tell which), which is its one rail. A
// partial re-certification watches only the nodes it measures again.
std::vector<FlapPort> FlapPortsOf(const plan::Plan& plan, const std::vector<NodeState>& nodes,
                                  const RerunScope* rerun);

// Reads every port's counters at once, one call per port, and waits for the
// last answer; a port whose node does not answer gets the error.
std::vector<checks::FlapRead> ReadFlapCounters(std::vector<NodeState>& nodes,
                                               const std::vector<FlapPort>& ports);

// The ports' LinkFlaps between the two reads, in port order.
std::vector<v1::LinkFlaps> FlapsOfRun(const std::vector<NodeState>& nodes,
                                      const std::vector<FlapPort>& ports,
                                      const std::vector<checks::FlapRead>& first,
                                      const std::vector<checks::FlapRead>& last);

}  // namespace clustercert::controller
