#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The per-node part of the HTML report: reachability, the software stack and
// clock, then one compact table each for RDMA ports, netdevs, PCIe links,
// GPUs, GPU-NIC paths and RoCE QoS, and every fact the agent could not read
// with its reason. A node without an inventory says why.
std::string NodeInventoryHtml(const v1::NodeResult& node);

}  // namespace clustercert::controller::report
