#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// PCIe link of each rail NIC and each GPU, the seed's fourth suspect (gen and
// lanes). Both are skipped when the plan sets neither expect.pcie.gen nor width.
//   pcie.nic (error, roce/infiniband), per present rail: the PCI function with
//     role nic and the rail's name has current_gen >= gen and current_width >=
//     width; skipped for a virtual device (rxe) that has no PCIe link.
//   pcie.gpu (error), per GPU function: the same. A GPU short only of link
//     speed while its max meets the plan is a warning: GPUs drop their link
//     speed when idle, so only a check under load can tell.
void AppendPcieChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
