#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// RoCE QoS on each rail port's netdev (roce only), where the seed says RoCE
// clusters live or die. The netdev's entry is the Inventory.qos element with
// that netdev; a missing entry makes every QoS check unknown.
//   qos.pfc (error): pfc_enabled_mask == 1 << roce.pfc_priority exactly.
//   qos.trust (error): the effective trust equals roce.trust. Effective trust
//     is the `trust` field when set, else "dscp" when the DCB app table has
//     DSCP entries (upstream mlx5 switches to DSCP trust then), else unknown.
//   qos.dscp (error, when roce.trust is dscp): every DCB app-table entry for
//     roce.dscp maps it to roce.pfc_priority; skipped when the table has no
//     DSCP entries (the driver's default map applies and is not reported).
//   qos.traffic_class (warning): traffic_class == dscp << 2 | (ecn ? 2 : 0).
//   qos.ecn (warning, when roce.ecn): bit pfc_priority set in both
//     ecn_np_mask and ecn_rp_mask.
// With roce.lossless false (no DCB on the fabric: soft-RoCE) every one of
// them is skipped with that reason.
void AppendQosChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
