#pragma once

#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/check_context.h"

namespace clustercert::controller::checks {

// clock.ntp (error, every fabric): the kernel clock is NTP-synchronised
// (clock.synchronized true); skipped when the plan sets expect.ntp_synced:
// false. The offset between nodes is a cluster-wide check, not this one.
void AppendClockChecks(const CheckContext& context, std::vector<v1::Finding>& findings);

}  // namespace clustercert::controller::checks
