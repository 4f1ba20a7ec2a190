#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// The uplink phase for the terminal: the sizing in one line (required
// against capacity, verdict, checkpoint time), then one table per target
// with a row per node and a column per flow count: the aggregate Gb/s and,
// for several flows, each flow's range ("0.16 (0.04-0.04)"), FAILED for a
// run that did not complete.
std::string RenderUplinkTables(const v1::Uplink& uplink);

}  // namespace clustercert::controller
