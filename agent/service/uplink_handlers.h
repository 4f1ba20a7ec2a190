#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/uplink/uplink_flows.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::agent {

// The flow runners the uplink handler dispatches to: the real ones
// (RunHttpRangeFlows, RunTcpSendFlows) in the daemon, fakes in tests.
struct UplinkFlowRunners {
  using Runner = std::function<absl::StatusOr<uplink::FlowsResult>(
      const std::string& target, const uplink::FlowSpec& spec, std::atomic<uint64_t>* moved)>;
  Runner http;
  Runner tcp;
};

// RunUplinkFlows as a plain class: checks the request, turns it into a
// FlowSpec with a deadline on the injected clock, runs the flows and
// converts the figures.
//
// Anyone who reaches the agent can send this request, so it is checked as
// hostile before anything connects: the target by ParseUplinkUrl (http and
// https only) or ParseUplinkTcpAddress (a literal IP and port), flows at
// most kMaxUplinkFlows, duration_s at most kMaxUplinkDurationS, timeout_ms
// at most the duration plus kMaxTimeoutSlack; InvalidArgument names the
// field, the value and the limit. One run at a time: a second request while
// one runs is ResourceExhausted, so concurrent calls cannot multiply the
// sockets and threads the limits bound.
class UplinkHandlers {
 public:
  // How much longer than the flows a call may be given to finish (probing
  // the object, connecting); the controller gives 15 s.
  static constexpr absl::Duration kMaxTimeoutSlack = absl::Seconds(60);

  UplinkHandlers(UplinkFlowRunners runners, std::function<absl::Time()> now);

  absl::StatusOr<v1::RunUplinkFlowsResponse> Run(const v1::RunUplinkFlowsRequest& request);

 private:
  absl::StatusOr<uplink::FlowSpec> CheckRequest(const v1::RunUplinkFlowsRequest& request) const;

  UplinkFlowRunners runners_;
  std::function<absl::Time()> now_;
  std::atomic<bool> running_{false};
};

}  // namespace clustercert::agent
