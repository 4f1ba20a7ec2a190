#include "agent/service/uplink_handlers.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::agent {

UplinkHandlers::UplinkHandlers(UplinkFlowRunners runners, std::function<absl::Time()> now)
    : runners_(std::move(runners)), now_(std::move(now)) {}

absl::StatusOr<v1::RunUplinkFlowsResponse> UplinkHandlers::Run(
    const v1::RunUplinkFlowsRequest& request) {
  const bool http = request.type() == "http";
  if (!http && request.type() != "tcp") {
    return absl::InvalidArgumentError(absl::StrCat(
        "uplink target type '", request.type(),
        "' is not one this agent runs: http or tcp (agent targets are peer tests)"));
  }
  const std::string& target = http ? request.url() : request.address();
  if (target.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("an uplink ", request.type(), " target needs ", http ? "a url" : "an address",
                     " and got none: set uplink.targets[].", http ? "url" : "address",
                     " in the plan"));
  }
  if (request.flows() < 1 || request.flows() > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("flows ", request.flows(),
                     " is outside 1..1024: give uplink.flows counts from 1 to 1024 in the plan"));
  }
  if (!(request.duration_s() > 0) || request.duration_s() > 3600) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration_s ", request.duration_s(),
                     " is outside (0, 3600]: give uplink.duration_s from above 0 to 3600 seconds"));
  }
  uplink::FlowSpec spec;
  spec.flows = static_cast<int>(request.flows());
  spec.duration = absl::Seconds(request.duration_s());
  spec.bind_ip = request.bind_ip();
  const absl::Duration timeout = request.timeout_ms() > 0
                                     ? absl::Milliseconds(request.timeout_ms())
                                     : spec.duration + absl::Seconds(15);
  spec.deadline = now_() + timeout;

  const UplinkFlowRunners::Runner& runner = http ? runners_.http : runners_.tcp;
  if (!runner) {
    return absl::UnimplementedError(
        absl::StrCat("this agent has no ", request.type(), " uplink runner"));
  }
  absl::StatusOr<uplink::FlowsResult> result = runner(target, spec, nullptr);
  if (!result.ok()) return result.status();

  v1::RunUplinkFlowsResponse response;
  v1::UplinkFlows& out = *response.mutable_result();
  for (const uplink::FlowTally& tally : result->flows) {
    v1::UplinkFlow& flow = *out.add_flows();
    flow.set_bytes(tally.bytes);
    flow.set_seconds(tally.seconds);
    flow.set_gbps(uplink::FlowGbps(tally));
    flow.set_requests(tally.requests);
  }
  out.set_total_bytes(result->total_bytes);
  out.set_seconds(result->seconds);
  out.set_aggregate_gbps(result->aggregate_gbps);
  out.set_object_bytes(result->object_bytes);
  out.set_detail(result->detail);
  return response;
}

}  // namespace clustercert::agent
