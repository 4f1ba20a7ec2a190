#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// Rails and the link state of each rail port (roce and infiniband; skipped on
// an ethernet fabric). Per rail, in plan order:
//   rail.present (error): the rail is one of inventory.rdma_devices; an absent
//     rail gets no further per-rail findings.
// Then, per port of a present rail:
//   port.state (error): state_code 4 (ACTIVE).
//   port.phys_state (error): phys_state_code 5 (LinkUp).
//   port.rate (error, when fabric.link_rate_gbps > 0): rate_gbps >= it.
//   port.link_layer (error): "InfiniBand" on infiniband, "Ethernet" on roce.
void AppendPortChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

// ib.subnet_manager (error, infiniband only), per rail port: state ACTIVE with
// sm_lid != 0 and lid != 0, i.e. a subnet manager has configured the port.
void AppendSubnetManagerChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

// The seed's advice when an InfiniBand port has no subnet manager.
extern const char kNoSubnetManagerRemedy[];

}  // namespace clustercert::controller::checks
