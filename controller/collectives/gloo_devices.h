#pragma once

// The gloo devices a sweep's ranks created, and collectives.transport's
// judgement of them. Each gloo rank sends two notes: its arguments
// ("transport tcp 10.0.0.1") and what the device gloo created says it is
// ("device tcp, pci=, iface=eth1, speed=25000, addr=[10.0.0.1]; bound
// [10.0.0.1]:40123", sweep/device_report.h). The check compares the latter
// with the plan, so a rank that asked for ibverbs and got something else, or
// a tcp device bound to an address the plan did not give, is caught.

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller {

// At most this many ranks are recorded per sweep (bounds what agents send).
inline constexpr int kMaxGlooDevices = 4096;

// Fills sweep.gloo_devices from the ranks' notes ("node1 rank 0: device ...",
// as the controller prefixes them), one entry per rank that sent either
// note, ordered by rank, and sets sweep.transport to the transport every
// reporting rank's device has ("mixed" when they differ, "" when none said).
void RecordGlooDevices(const std::vector<std::string>& notes, v1::CollectiveSweep& sweep);

// collectives.transport for gloo from sweep.gloo_devices: fails naming the
// node and rank whose device is not the planned transport (`expected`:
// "tcp" | "ibverbs"), or a tcp device on another address, or an ibverbs
// device other than the one asked for; unknown when a rank did not report
// its device (a worker older than the controller) or fewer ranks reported
// than ran. Needs a non-empty gloo_devices.
v1::Finding JudgeGlooDevices(const checks::FindingBuilder& builder,
                             const v1::CollectiveSweep& sweep, const std::string& expected);

}  // namespace clustercert::controller
