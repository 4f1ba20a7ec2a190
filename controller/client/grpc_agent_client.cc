#include "controller/client/grpc_agent_client.h"

#include <functional>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "common/tls_files.h"

namespace clustercert::controller {
namespace {

// Owns everything one in-flight call needs until its callback has run.
template <typename Request, typename Response>
struct PendingCall {
  grpc::ClientContext context;
  Request request;
  Response response;
  AgentCallback<Response> done;
  absl::Time sent;
};

// gRPC's timer may fire a hair before the deadline we computed from `sent`.
constexpr absl::Duration kDeadlineTolerance = absl::Milliseconds(100);

// Whether a failed call means the agent never answered (MarkNoAnswer): the
// call's own deadline passed (an agent's DEADLINE_EXCEEDED about its data
// plane arrives before it, the call deadlines carry slack for that), or the
// channel to it is down (an agent's own UNAVAILABLE, "peer closed the
// connection", arrives over a READY channel).
bool AgentSilent(const grpc::Status& status, absl::Duration elapsed, absl::Duration timeout,
                 grpc::Channel& channel) {
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return elapsed + kDeadlineTolerance >= timeout;
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return channel.GetState(false) != GRPC_CHANNEL_READY;
  }
  return false;
}

// The generated stub's callback-API method for one RPC.
template <typename Request, typename Response>
using AsyncMethod = void (v1::NodeAgent::Stub::async::*)(grpc::ClientContext*, const Request*,
                                                         Response*,
                                                         std::function<void(grpc::Status)>);

// Every RPC goes through here: one deadline, one PendingCall, one mapping of
// gRPC's status (with MarkNoAnswer when the agent never answered).
template <typename Request, typename Response>
void StartCall(v1::NodeAgent::Stub& stub, const std::shared_ptr<grpc::Channel>& channel,
               AsyncMethod<Request, Response> method, const Request& request,
               absl::Duration timeout, AgentCallback<Response> done) {
  auto call = std::make_shared<PendingCall<Request, Response>>();
  call->request = request;
  call->done = std::move(done);
  call->sent = absl::Now();
  call->context.set_deadline(absl::ToChronoTime(call->sent + timeout));
  (stub.async()->*method)(
      &call->context, &call->request, &call->response,
      [call, timeout, channel](grpc::Status status) {
        CallTiming timing{call->sent, absl::Now()};
        if (status.ok()) {
          call->done(std::move(call->response), timing);
        } else if (AgentSilent(status, timing.received - timing.sent, timeout, *channel)) {
          call->done(MarkNoAnswer(FromGrpcStatus(status)), timing);
        } else {
          call->done(FromGrpcStatus(status), timing);
        }
      });
}

}  // namespace

GrpcAgentClient::GrpcAgentClient(std::shared_ptr<grpc::Channel> channel)
    : channel_(std::move(channel)), stub_(v1::NodeAgent::NewStub(channel_)) {}

void GrpcAgentClient::GetVersion(absl::Duration timeout,
                                 AgentCallback<v1::GetVersionResponse> done) {
  StartCall<v1::GetVersionRequest, v1::GetVersionResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::GetVersion, v1::GetVersionRequest(), timeout,
      std::move(done));
}

void GrpcAgentClient::GetInventory(const v1::GetInventoryRequest& request, absl::Duration timeout,
                                   AgentCallback<v1::GetInventoryResponse> done) {
  StartCall<v1::GetInventoryRequest, v1::GetInventoryResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::GetInventory, request, timeout,
      std::move(done));
}

void GrpcAgentClient::PrepareEndpoint(const v1::PrepareEndpointRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::PrepareEndpointResponse> done) {
  StartCall<v1::PrepareEndpointRequest, v1::PrepareEndpointResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::PrepareEndpoint, request, timeout,
      std::move(done));
}

void GrpcAgentClient::ConnectEndpoint(const v1::ConnectEndpointRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::ConnectEndpointResponse> done) {
  StartCall<v1::ConnectEndpointRequest, v1::ConnectEndpointResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::ConnectEndpoint, request, timeout,
      std::move(done));
}

void GrpcAgentClient::RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration timeout,
                                  AgentCallback<v1::RunEndpointResponse> done) {
  StartCall<v1::RunEndpointRequest, v1::RunEndpointResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::RunEndpoint, request, timeout,
      std::move(done));
}

void GrpcAgentClient::CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration timeout,
                                    AgentCallback<v1::CloseEndpointResponse> done) {
  StartCall<v1::CloseEndpointRequest, v1::CloseEndpointResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::CloseEndpoint, request, timeout,
      std::move(done));
}

void GrpcAgentClient::ReadPortCounters(const v1::ReadPortCountersRequest& request,
                                       absl::Duration timeout,
                                       AgentCallback<v1::ReadPortCountersResponse> done) {
  StartCall<v1::ReadPortCountersRequest, v1::ReadPortCountersResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::ReadPortCounters, request, timeout,
      std::move(done));
}

void GrpcAgentClient::GetEndpointProgress(const v1::GetEndpointProgressRequest& request,
                                          absl::Duration timeout,
                                          AgentCallback<v1::GetEndpointProgressResponse> done) {
  StartCall<v1::GetEndpointProgressRequest, v1::GetEndpointProgressResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::GetEndpointProgress, request, timeout,
      std::move(done));
}

absl::StatusOr<GrpcAgentClientFactory> GrpcAgentClientFactory::Create(
    const plan::AgentSettings& settings) {
  if (settings.insecure) return GrpcAgentClientFactory(grpc::InsecureChannelCredentials());
  auto material = LoadTlsMaterial(TlsPaths{settings.tls.ca, settings.tls.cert, settings.tls.key});
  if (!material.ok()) {
    return absl::Status(material.status().code(),
                        absl::StrCat(material.status().message(),
                                     " (the plan's agents.tls names the controller's CA, "
                                     "certificate and key; agents.insecure: true is for loopback "
                                     "development only)"));
  }
  return GrpcAgentClientFactory(MutualTlsChannelCredentials(*material));
}

std::unique_ptr<AgentClient> GrpcAgentClientFactory::Connect(const std::string& address) const {
  grpc::ChannelArguments arguments;
  // Inventories of big hosts exceed gRPC's 4 MiB default.
  arguments.SetMaxReceiveMessageSize(64 << 20);
  // Fail fast on a dead agent instead of backing off for minutes.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto channel = grpc::CreateCustomChannel(address, credentials_, arguments);
  // Channels are kept for the life of the process: destroying the last one
  // while a failed connection attempt unwinds trips a gRPC 1.51 double free
  // (see controller/main.cc). One channel per agent per run is a bounded cost.
  static auto* kept = new std::vector<std::shared_ptr<grpc::Channel>>();
  static std::mutex kept_mutex;
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    kept->push_back(channel);
  }
  return std::make_unique<GrpcAgentClient>(std::move(channel));
}

void GrpcAgentClient::StartCollective(const v1::StartCollectiveRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::StartCollectiveResponse> done) {
  StartCall<v1::StartCollectiveRequest, v1::StartCollectiveResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::StartCollective, request, timeout,
      std::move(done));
}

void GrpcAgentClient::PollCollective(const v1::PollCollectiveRequest& request,
                                     absl::Duration timeout,
                                     AgentCallback<v1::PollCollectiveResponse> done) {
  StartCall<v1::PollCollectiveRequest, v1::PollCollectiveResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::PollCollective, request, timeout,
      std::move(done));
}

void GrpcAgentClient::StopCollective(const v1::StopCollectiveRequest& request,
                                     absl::Duration timeout,
                                     AgentCallback<v1::StopCollectiveResponse> done) {
  StartCall<v1::StopCollectiveRequest, v1::StopCollectiveResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::StopCollective, request, timeout,
      std::move(done));
}

void GrpcAgentClient::ExchangeTime(const v1::ExchangeTimeRequest& request, absl::Duration timeout,
                                   AgentCallback<v1::ExchangeTimeResponse> done) {
  StartCall<v1::ExchangeTimeRequest, v1::ExchangeTimeResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::ExchangeTime, request, timeout,
      std::move(done));
}

void GrpcAgentClient::RunUplinkFlows(const v1::RunUplinkFlowsRequest& request,
                                     absl::Duration timeout,
                                     AgentCallback<v1::RunUplinkFlowsResponse> done) {
  StartCall<v1::RunUplinkFlowsRequest, v1::RunUplinkFlowsResponse>(
      *stub_, channel_, &v1::NodeAgent::Stub::async::RunUplinkFlows, request, timeout,
      std::move(done));
}

}  // namespace clustercert::controller
