#pragma once

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// The collectives rules of certificate formats 2 and 3, kept so that
// `controller verify` recomputes an older certificate by the rules it was
// judged with (docs/certificate.md): the busbw floor was the plan's
// min_busbw_gbytes only (skipped at 0), and collectives.scaling compared the
// 2-node figure with the 1-node one (a fall of 3x or more failed), which
// NVLink nodes fail when healthy; format 4 replaced both
// (collective_verdicts.h).
v1::Finding JudgeBusbwFormat3(const plan::Plan& plan, const v1::CollectiveSweep& sweep);
v1::Finding JudgeScalingFormat3(const plan::Plan& plan, const v1::CollectiveSweep* one_node,
                                const v1::CollectiveSweep* two_node);

}  // namespace clustercert::controller
