#include "controller/client/grpc_agent_client.h"

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

template <typename Request, typename Response, typename Invoke>
void StartCall(const Request& request, absl::Duration timeout, AgentCallback<Response> done,
               Invoke invoke) {
  auto call = std::make_shared<PendingCall<Request, Response>>();
  call->request = request;
  call->done = std::move(done);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  call->sent = absl::Now();
  invoke(&call->context, &call->request, &call->response, [call](grpc::Status status) {
    CallTiming timing{call->sent, absl::Now()};
    if (status.ok()) {
      call->done(std::move(call->response), timing);
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
      v1::GetVersionRequest(), timeout, std::move(done),
      [this](auto* context, auto* request, auto* response, auto callback) {
        stub_->async()->GetVersion(context, request, response, std::move(callback));
      });
}

void GrpcAgentClient::GetInventory(const v1::GetInventoryRequest& request, absl::Duration timeout,
                                   AgentCallback<v1::GetInventoryResponse> done) {
  StartCall<v1::GetInventoryRequest, v1::GetInventoryResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->GetInventory(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::PrepareEndpoint(const v1::PrepareEndpointRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::PrepareEndpointResponse> done) {
  StartCall<v1::PrepareEndpointRequest, v1::PrepareEndpointResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->PrepareEndpoint(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::ConnectEndpoint(const v1::ConnectEndpointRequest& request,
                                      absl::Duration timeout,
                                      AgentCallback<v1::ConnectEndpointResponse> done) {
  StartCall<v1::ConnectEndpointRequest, v1::ConnectEndpointResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->ConnectEndpoint(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration timeout,
                                  AgentCallback<v1::RunEndpointResponse> done) {
  StartCall<v1::RunEndpointRequest, v1::RunEndpointResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->RunEndpoint(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration timeout,
                                    AgentCallback<v1::CloseEndpointResponse> done) {
  StartCall<v1::CloseEndpointRequest, v1::CloseEndpointResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->CloseEndpoint(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::ReadPortCounters(const v1::ReadPortCountersRequest& request,
                                       absl::Duration timeout,
                                       AgentCallback<v1::ReadPortCountersResponse> done) {
  StartCall<v1::ReadPortCountersRequest, v1::ReadPortCountersResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->ReadPortCounters(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::GetEndpointProgress(const v1::GetEndpointProgressRequest& request,
                                          absl::Duration timeout,
                                          AgentCallback<v1::GetEndpointProgressResponse> done) {
  StartCall<v1::GetEndpointProgressRequest, v1::GetEndpointProgressResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->GetEndpointProgress(context, req, response, std::move(callback));
      });
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

void GrpcAgentClient::StartCollective(const v1::StartCollectiveRequest& request, absl::Duration timeout,
                             AgentCallback<v1::StartCollectiveResponse> done) {
  StartCall<v1::StartCollectiveRequest, v1::StartCollectiveResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->StartCollective(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::PollCollective(const v1::PollCollectiveRequest& request, absl::Duration timeout,
                             AgentCallback<v1::PollCollectiveResponse> done) {
  StartCall<v1::PollCollectiveRequest, v1::PollCollectiveResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->PollCollective(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::StopCollective(const v1::StopCollectiveRequest& request, absl::Duration timeout,
                             AgentCallback<v1::StopCollectiveResponse> done) {
  StartCall<v1::StopCollectiveRequest, v1::StopCollectiveResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->StopCollective(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::ExchangeTime(const v1::ExchangeTimeRequest& request, absl::Duration timeout,
                                   AgentCallback<v1::ExchangeTimeResponse> done) {
  StartCall<v1::ExchangeTimeRequest, v1::ExchangeTimeResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->ExchangeTime(context, req, response, std::move(callback));
      });
}

void GrpcAgentClient::RunUplinkFlows(const v1::RunUplinkFlowsRequest& request,
                                     absl::Duration timeout,
                                     AgentCallback<v1::RunUplinkFlowsResponse> done) {
  StartCall<v1::RunUplinkFlowsRequest, v1::RunUplinkFlowsResponse>(
      request, timeout, std::move(done),
      [this](auto* context, auto* req, auto* response, auto callback) {
        stub_->async()->RunUplinkFlows(context, req, response, std::move(callback));
      });
}

}  // namespace clustercert::controller
