#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The report's uplink section: the sizing against the workload (the
// arithmetic, verdict, headroom, checkpoint time, the seed's advice), one
// row per node x target x flow count with the aggregate and each flow's
// Gb/s, then each node's management plane (netdev, subnet) and clock offset
// with the findings that judge them. "No uplink phase ran" when absent.
std::string UplinkSectionHtml(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
