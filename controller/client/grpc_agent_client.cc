#include "controller/client/grpc_agent_client.h"

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
  return std::make_unique<GrpcAgentClient>(
      grpc::CreateCustomChannel(address, credentials_, arguments));
}

}  // namespace clustercert::controller
