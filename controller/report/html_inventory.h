#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The per-node part of the HTML report: reachability, the software stack and
// clock, then one compact table each for RDMA ports, netdevs, PCIe links,
// GPUs, GPU-NIC paths and RoCE QoS, and every fact the agent could not read
// with its reason. A node without an inventory says why.
std::string NodeInventoryHtml(const v1::NodeResult& node);

// The same tables without what is the node's own: its name, agent address,
// hostname, management address, collection time, clock error and offset,
// InfiniBand LID, IPv4 addresses (counted instead) and GPU UUIDs. Nodes built
// and configured alike render the same text, which is how report.html groups
// them above kMaxNodesForPerNodeDetail nodes (html_large_cluster.h). A node
// without an inventory renders a line saying so.
std::string SharedInventoryHtml(const v1::NodeResult& node);

// "synchronized, est. error 12 us, max error 40 us" (what the agent read).
std::string ClockErrorText(const v1::Clock& clock);

// "0.25 ms ± 0.1 ms" from the controller's measurement; "" when not measured.
std::string ClockOffsetText(const v1::NodeResult& node);

}  // namespace clustercert::controller::report
