#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/plan/plan.h"

namespace clustercert::controller::uplink {

// "0.185 Gb/s": three significant digits, as uplink figures are printed.
std::string GbpsText(double gbps);

// uplink.sizing: the required ingest against the capacity (fail when the
// uplink is smaller than the read rate; unknown when the plan gives no rate
// or no capacity), advice in the message.
v1::Finding SizingFinding(const v1::UplinkSizing& sizing);

// uplink.throughput, one per node and target, from that pair's runs (one
// per flow count): fail when a run failed (the target unreachable, an
// outage) or when the best aggregate stays below the node's share of the
// required ingest (`need_gbps`); the message sets one flow against N flows,
// the seed's point that one TCP flow uses one NIC.
std::vector<v1::Finding> ThroughputFindings(const v1::Uplink& uplink);

// Every uplink finding, in certificate order: sizing, then throughput.
// Used by the run and by verify's recomputation alike.
std::vector<v1::Finding> JudgeUplink(const v1::Uplink& uplink);

}  // namespace clustercert::controller::uplink
