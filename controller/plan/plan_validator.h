#pragma once

#include "controller/plan/plan.h"
#include "controller/plan/plan_error_list.h"

namespace clustercert::controller::plan {

// Checks the rules that tie one section of a parsed plan to another: unique
// node names and agents, rails wherever the fabric is RDMA, GPUs wherever the
// plan asks for cuda memory or NCCL, k with k-batch, uplink agent targets
// that name a node of the plan. Positions come from Plan::locations. A rule
// stays quiet when one of its inputs was already reported as wrong in
// `errors`, so one mistake yields one message.
void ValidatePlan(const Plan& plan, PlanErrorList* errors);

}  // namespace clustercert::controller::plan
