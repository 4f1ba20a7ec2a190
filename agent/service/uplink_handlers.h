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
// converts the figures. InvalidArgument names the field and its range.
class UplinkHandlers {
 public:
  UplinkHandlers(UplinkFlowRunners runners, std::function<absl::Time()> now);

  absl::StatusOr<v1::RunUplinkFlowsResponse> Run(const v1::RunUplinkFlowsRequest& request);

 private:
  UplinkFlowRunners runners_;
  std::function<absl::Time()> now_;
};

}  // namespace clustercert::agent
