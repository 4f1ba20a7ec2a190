#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// Host settings that break or slow the GPU<->NIC data path while every link
// and port reads healthy (docs/checks.md).
//
//   pcie.acs (error, roce/infiniband, plan lists GPUs and rails): no PCIe
//     bridge between a GPU and a rail NIC that meet below the host bridge
//     (PIX/PXB) has ACS Request Redirect, Completion Redirect or Egress
//     Control on; one fail per such bridge naming its pairs, one pass per
//     node otherwise; unknown when a bridge's config space was unreadable or
//     a switched pair's bridges were not reported. Pairs that meet only at
//     the host bridge (PHB and beyond) cross the root complex whatever ACS
//     says, so their root ports are not judged.
//   host.iommu (warning): the IOMMU is off or in passthrough; translated is
//     a fail on a roce/infiniband node the plan gives GPUs and rails.
//   nic.link_type (error), per present rail with a PCI function: the
//     firmware's LINK_TYPE_P<function + 1> is ETH(2) on roce/ethernet and
//     IB(1) on infiniband; skipped with the reason when the firmware
//     configuration could not be read, or the card has no LINK_TYPE.
//   nic.ats (warning, expect.nvidia_peermem, roce/infiniband), per present
//     rail whose GPU pairs cross a bridge with ACS redirect on: ATS_ENABLED is
//     True(1), so translated peer-to-peer requests can pass the switch (with
//     ACS Direct Translated P2P) instead of the root complex; skipped when no
//     redirect is on a GPU<->rail path or the configuration was not read.
void AppendHostSettingChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
