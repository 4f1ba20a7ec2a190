#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "agent/uplink/uplink_flows.h"

// The tcp flavour of the uplink measurement: N plain TCP connections to a
// sink (`socat -u TCP-LISTEN:PORT,fork /dev/null`, a storage node's discard
// port), each sending one reused buffer as fast as the socket takes it for
// the duration. No protocol and no server side of ours: it isolates what the
// network path carries from what a storage server serves. With nothing of
// ours at the receiver, a flow's bytes are the bytes the peer acknowledged
// (TCP_INFO tcpi_bytes_acked), never the bytes send() took into this host's
// buffers; its window runs from just before its first send to the
// acknowledgement that completed it.
namespace clustercert::agent::uplink {

// Runs spec.flows sending flows to `host_port` ("10.0.0.9:5201" or
// "[fd00::9]:5201": literal addresses only, never names, and none that
// ParseUplinkTcpAddress or CheckDestination refuses) for spec.duration,
// adding acknowledged bytes to `moved` (may be null). Errors: InvalidArgument
// for a bad spec or address, Unavailable when the sink refuses or drops a
// flow, FailedPrecondition ("the target read N bytes in T s: ...") when a
// flow's acknowledgements stood still for half the duration with bytes
// waiting (a sink that accepts but does not read), or when the kernel does
// not report acknowledged bytes, DeadlineExceeded when connecting does not
// finish in time or the deadline cannot hold the duration,
// ResourceExhausted when out of sockets.
absl::StatusOr<FlowsResult> RunTcpSendFlows(const std::string& host_port, const FlowSpec& spec,
                                            std::atomic<uint64_t>* moved);

}  // namespace clustercert::agent::uplink
