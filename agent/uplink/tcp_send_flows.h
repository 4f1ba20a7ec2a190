#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "agent/uplink/uplink_flows.h"

// The tcp flavour of the uplink measurement: N plain TCP connections to a
// sink (`nc -lk`, a storage node's discard port), each sending one reused
// buffer as fast as the socket takes it for the duration. No protocol and no
// server side of ours: it isolates what the network path carries from what a
// storage server serves. A flow's bytes are the bytes send() accepted; its
// window runs from just before its first send to the return of its last.
namespace clustercert::agent::uplink {

// Runs spec.flows sending flows to `host_port` ("10.0.0.9:5201" or
// "[fd00::9]:5201": literal addresses only, never names, and none that
// ParseUplinkTcpAddress or CheckDestination refuses) for spec.duration,
// adding sent bytes to `moved` (may be null). Errors: InvalidArgument for a
// bad spec or address, Unavailable when the sink refuses or drops a flow,
// DeadlineExceeded when connecting does not finish in time or the deadline
// cannot hold the duration, ResourceExhausted when out of sockets.
absl::StatusOr<FlowsResult> RunTcpSendFlows(const std::string& host_port, const FlowSpec& spec,
                                            std::atomic<uint64_t>* moved);

}  // namespace clustercert::agent::uplink
