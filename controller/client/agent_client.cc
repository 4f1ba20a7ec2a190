#include "controller/client/agent_client.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace clustercert::controller {
namespace {

constexpr char kNoAnswerPayload[] = "type.clustercert.dev/no-answer";

template <typename Response>
void AnswerUnimplemented(const char* call, AgentCallback<Response>& done) {
  const absl::Time now = absl::Now();
  done(absl::UnimplementedError(
           absl::StrCat(call,
                        " is not implemented by this agent client: upgrade the node-agent "
                        "to this clustercert release")),
       CallTiming{now, now});
}

}  // namespace

absl::Status MarkNoAnswer(absl::Status status) {
  if (!status.ok()) status.SetPayload(kNoAnswerPayload, absl::Cord("1"));
  return status;
}

bool IsNoAnswer(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kNoAnswerPayload).has_value();
}

void AgentClient::ExchangeTime(const v1::ExchangeTimeRequest&, absl::Duration,
                               AgentCallback<v1::ExchangeTimeResponse> done) {
  AnswerUnimplemented("ExchangeTime", done);
}

void AgentClient::RunUplinkFlows(const v1::RunUplinkFlowsRequest&, absl::Duration,
                                 AgentCallback<v1::RunUplinkFlowsResponse> done) {
  AnswerUnimplemented("RunUplinkFlows", done);
}

}  // namespace clustercert::controller
