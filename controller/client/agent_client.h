#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/node_agent.pb.h"

namespace clustercert::controller {

// When a call left and its answer arrived, on the controller's clock: the
// connect phase turns these into a clock-offset estimate per node.
struct CallTiming {
  absl::Time sent;
  absl::Time received;
};

// Marks `status` as "the agent never answered": the call's own deadline
// passed, or the transport to the agent failed. An error the agent itself
// returned (its data plane timed out, its peer hung up) is never marked, so
// only silence makes the controller stop asking a node (NodeHealth).
absl::Status MarkNoAnswer(absl::Status status);
bool IsNoAnswer(const absl::Status& status);

template <typename Response>
using AgentCallback = std::function<void(absl::StatusOr<Response>, CallTiming)>;

// One node-agent, as the controller's phases see it. Calls are asynchronous
// so the controller can drive a thousand agents without a thread each; the
// callback runs on a client thread and must not block. Every call carries
// its timeout. gRPC in production (GrpcAgentClient); fakes in tests.
class AgentClient {
 public:
  virtual ~AgentClient() = default;
  virtual void GetVersion(absl::Duration timeout, AgentCallback<v1::GetVersionResponse> done) = 0;
  virtual void GetInventory(const v1::GetInventoryRequest& request, absl::Duration timeout,
                            AgentCallback<v1::GetInventoryResponse> done) = 0;

  // Peer-test endpoints (see NodeAgent in node_agent.proto).
  virtual void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration timeout,
                               AgentCallback<v1::PrepareEndpointResponse> done) = 0;
  virtual void ConnectEndpoint(const v1::ConnectEndpointRequest& request, absl::Duration timeout,
                               AgentCallback<v1::ConnectEndpointResponse> done) = 0;
  virtual void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration timeout,
                           AgentCallback<v1::RunEndpointResponse> done) = 0;
  virtual void CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration timeout,
                             AgentCallback<v1::CloseEndpointResponse> done) = 0;
  virtual void GetEndpointProgress(const v1::GetEndpointProgressRequest& request,
                                   absl::Duration timeout,
                                   AgentCallback<v1::GetEndpointProgressResponse> done) = 0;
  virtual void ReadPortCounters(const v1::ReadPortCountersRequest& request, absl::Duration timeout,
                                AgentCallback<v1::ReadPortCountersResponse> done) = 0;

  // Collective jobs (see NodeAgent in node_agent.proto).
  virtual void StartCollective(const v1::StartCollectiveRequest& request, absl::Duration timeout,
                               AgentCallback<v1::StartCollectiveResponse> done) = 0;
  virtual void PollCollective(const v1::PollCollectiveRequest& request, absl::Duration timeout,
                              AgentCallback<v1::PollCollectiveResponse> done) = 0;
  virtual void StopCollective(const v1::StopCollectiveRequest& request, absl::Duration timeout,
                              AgentCallback<v1::StopCollectiveResponse> done) = 0;

  // The uplink phase's calls (see NodeAgent in node_agent.proto). They answer
  // Unimplemented by default, as an agent without them does, so a client
  // that does not speak them (a test fake) needs no code for them.
  virtual void ExchangeTime(const v1::ExchangeTimeRequest& request, absl::Duration timeout,
                            AgentCallback<v1::ExchangeTimeResponse> done);
  virtual void RunUplinkFlows(const v1::RunUplinkFlowsRequest& request, absl::Duration timeout,
                              AgentCallback<v1::RunUplinkFlowsResponse> done);
};

// The calls that take a request, as X(Name) with v1::NameRequest and
// v1::NameResponse: an implementation that treats every call alike declares
// its overrides with CLUSTERCERT_AGENT_REQUEST_RPCS(CLUSTERCERT_AGENT_RPC_OVERRIDE)
// (GrpcAgentClient, GuardedAgentClient), so a new RPC is one line here.
// clang-format off
#define CLUSTERCERT_AGENT_REQUEST_RPCS(X) \
  X(GetInventory) \
  X(PrepareEndpoint) \
  X(ConnectEndpoint) \
  X(RunEndpoint) \
  X(CloseEndpoint) \
  X(GetEndpointProgress) \
  X(ReadPortCounters) \
  X(StartCollective) \
  X(PollCollective) \
  X(StopCollective) \
  X(ExchangeTime) \
  X(RunUplinkFlows)
// clang-format on

#define CLUSTERCERT_AGENT_RPC_OVERRIDE(Name)                          \
  void Name(const v1::Name##Request& request, absl::Duration timeout, \
            AgentCallback<v1::Name##Response> done) override;

}  // namespace clustercert::controller
