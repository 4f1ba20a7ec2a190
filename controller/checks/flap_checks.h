#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "clustercert/v1/counters.pb.h"

// port.flap: whether a rail port's link went down at any time during the
// run, from its link-down counters read right after the inventory and again
// after the last phase, so a flap between two tests (or in a phase that does
// not watch counters) is caught as well as one during a cell. Pure: the
// reads come in, so `controller verify` can judge the recorded LinkFlaps.
namespace clustercert::controller::checks {

// One read of a rail port: the counters, or why there are none.
struct FlapRead {
  v1::PortCounters counters;
  std::string error;  // empty when the read answered
};

// The counters that count a link going down: the netdev's carrier_changes
// (sysfs; one flap adds 2, down and up), IB/RoCE counters/link_downed and
// mlx5's ethtool link_down_events_phy (one per flap).
bool IsFlapCounter(const std::string& source, const std::string& name);

// The port's LinkFlaps: each flap counter's delta between the two reads
// (counter_deltas.h DiffCounters), or the error of a read that failed.
v1::LinkFlaps FlapsOver(const std::string& node, const std::string& rail, const std::string& netdev,
                        const FlapRead& first, const FlapRead& last);

// port.flap (error) on one port, node = the node, device = the rail:
//   a flap counter rose       -> fail, naming how many times the link went
//                                down and each counter's change
//   a read failed, no flap counter was read on both sides, or one went
//   backwards (a reset hides what happened) -> unknown, with the reason
//   otherwise                 -> pass
v1::Finding JudgeFlaps(const v1::LinkFlaps& flaps);

std::vector<v1::Finding> JudgeAllFlaps(
    const google::protobuf::RepeatedPtrField<v1::LinkFlaps>& flaps);

}  // namespace clustercert::controller::checks
