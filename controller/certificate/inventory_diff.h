#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/certificate_diff.h"

namespace clustercert::controller {

// The inventory part of DiffCertificates: nodes matched by name, RDMA
// devices by name, ports by number, netdevs by name, PCI functions by name,
// GPUs by index. Hardware identities (GUIDs, GIDs, board ids, PCI addresses,
// GPU UUIDs) and versions are listed; a capability that fell (port rate,
// width, state, MTU, PCIe link, a component or node gone) is a regression.
// Appends to *entries in OLD's node order, then NEW's added nodes.
void DiffNodeInventories(const v1::Certificate& old_cert, const v1::Certificate& new_cert,
                         std::vector<DiffEntry>* entries);

}  // namespace clustercert::controller
