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

// Each RPC's method is the same adapter onto StartCall.
#define CLUSTERCERT_AGENT_RPC(Name)                                                              \
  void GrpcAgentClient::Name(const v1::Name##Request& request, absl::Duration timeout,           \
                             AgentCallback<v1::Name##Response> done) {                           \
    StartCall<v1::Name##Request, v1::Name##Response>(                                            \
        *stub_, channel_, &v1::NodeAgent::Stub::async::Name, request, timeout, std::move(done)); \
  }

CLUSTERCERT_AGENT_RPC(GetInventory)
CLUSTERCERT_AGENT_RPC(PrepareEndpoint)
CLUSTERCERT_AGENT_RPC(ConnectEndpoint)
CLUSTERCERT_AGENT_RPC(RunEndpoint)
CLUSTERCERT_AGENT_RPC(CloseEndpoint)
CLUSTERCERT_AGENT_RPC(ReadPortCounters)
CLUSTERCERT_AGENT_RPC(GetEndpointProgress)
CLUSTERCERT_AGENT_RPC(StartCollective)
CLUSTERCERT_AGENT_RPC(PollCollective)
CLUSTERCERT_AGENT_RPC(StopCollective)
CLUSTERCERT_AGENT_RPC(ExchangeTime)
CLUSTERCERT_AGENT_RPC(RunUplinkFlows)

#undef CLUSTERCERT_AGENT_RPC

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
  // Agents' answers are untrusted too: an answer marked compressed
  // (grpc-encoding) fails the call from its headers, since gRPC 1.51 would
  // inflate the whole message before the size check (a gzip bomb). Agents
  // never compress.
  arguments.SetInt(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET, 1 << GRPC_COMPRESS_NONE);
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

}  // namespace clustercert::controller
