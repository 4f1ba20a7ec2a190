#include "controller/client/agent_client.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace clustercert::controller {
namespace {

template <typename Response>
void AnswerUnimplemented(const char* call, AgentCallback<Response>& done) {
  const absl::Time now = absl::Now();
  done(absl::UnimplementedError(
           absl::StrCat(call, " is not implemented by this agent client: upgrade the node-agent "
                              "to this clustercert release")),
       CallTiming{now, now});
}

}  // namespace

void AgentClient::ExchangeTime(const v1::ExchangeTimeRequest&, absl::Duration,
                               AgentCallback<v1::ExchangeTimeResponse> done) {
  AnswerUnimplemented("ExchangeTime", done);
}

void AgentClient::RunUplinkFlows(const v1::RunUplinkFlowsRequest&, absl::Duration,
                                 AgentCallback<v1::RunUplinkFlowsResponse> done) {
  AnswerUnimplemented("RunUplinkFlows", done);
}

}  // namespace clustercert::controller
