#include "agent/service/uplink_handlers.h"

#include <cmath>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/printable.h"
#include "common/uplink_target.h"

namespace clustercert::agent {

UplinkHandlers::UplinkHandlers(UplinkFlowRunners runners, std::function<absl::Time()> now)
    : runners_(std::move(runners)), now_(std::move(now)) {}

absl::StatusOr<uplink::FlowSpec> UplinkHandlers::CheckRequest(
    const v1::RunUplinkFlowsRequest& request) const {
  const bool http = request.type() == "http";
  if (!http && request.type() != "tcp") {
    return absl::InvalidArgumentError(
        absl::StrCat("uplink target type '", PrintableText(request.type(), 32),
                     "' is not one this agent runs: http or tcp (agent targets are peer tests)"));
  }
  const std::string& target = http ? request.url() : request.address();
  if (target.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an uplink ", request.type(), " target needs ", http ? "a url" : "an address",
        " and got none: set uplink.targets[].", http ? "url" : "address", " in the plan"));
  }
  const absl::Status target_valid =
      http ? ParseUplinkUrl(target).status() : ParseUplinkTcpAddress(target).status();
  if (!target_valid.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("uplink ", request.type(), " target \"", PrintableText(target, 256),
                     "\" is refused: ", target_valid.message(), "; fix uplink.targets[].",
                     http ? "url" : "address", " in the plan"));
  }
  if (request.flows() < 1 || request.flows() > static_cast<uint32_t>(kMaxUplinkFlows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "flows ", request.flows(), " is outside 1..", kMaxUplinkFlows,
        " (the most parallel flows one run may open): give uplink.flows counts from 1 to ",
        kMaxUplinkFlows, " in the plan"));
  }
  // NaN fails both comparisons: !(x > 0) catches it.
  if (!(request.duration_s() > 0) || request.duration_s() > kMaxUplinkDurationS) {
    return absl::InvalidArgumentError(absl::StrCat("duration_s ", request.duration_s(),
                                                   " is outside (0, ", kMaxUplinkDurationS,
                                                   "]: give uplink.duration_s above 0 and at most ",
                                                   kMaxUplinkDurationS, " seconds in the plan"));
  }
  uplink::FlowSpec spec;
  spec.flows = static_cast<int>(request.flows());
  spec.duration = absl::Seconds(request.duration_s());
  spec.bind_ip = request.bind_ip();
  const absl::Duration max_timeout = spec.duration + kMaxTimeoutSlack;
  const absl::Duration timeout = request.timeout_ms() > 0 ? absl::Milliseconds(request.timeout_ms())
                                                          : spec.duration + absl::Seconds(15);
  if (timeout > max_timeout) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeout_ms ", request.timeout_ms(), " is more than ",
                     absl::ToInt64Milliseconds(max_timeout), " (the duration plus ",
                     absl::FormatDuration(kMaxTimeoutSlack), "): give a timeout of at most that"));
  }
  spec.deadline = now_() + timeout;
  return spec;
}

absl::StatusOr<v1::RunUplinkFlowsResponse> UplinkHandlers::Run(
    const v1::RunUplinkFlowsRequest& request) {
  absl::StatusOr<uplink::FlowSpec> spec = CheckRequest(request);
  if (!spec.ok()) return spec.status();
  const bool http = request.type() == "http";
  const UplinkFlowRunners::Runner& runner = http ? runners_.http : runners_.tcp;
  if (!runner) {
    return absl::UnimplementedError(
        absl::StrCat("this agent has no ", request.type(), " uplink runner"));
  }
  if (running_.exchange(true)) {
    return absl::ResourceExhaustedError(
        "an uplink run is already in progress on this agent; runs are one at a time: wait for "
        "it to finish, then retry");
  }
  absl::Cleanup done = [this] { running_.store(false); };
  absl::StatusOr<uplink::FlowsResult> result =
      runner(http ? request.url() : request.address(), *spec, nullptr);
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
