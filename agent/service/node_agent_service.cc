#include "agent/service/node_agent_service.h"

#include <chrono>
#include <string>
#include <utility>

#include "agent/service/caller_identity.h"
#include "agent/service/pooled_call.h"
#include "common/grpc_status.h"
#include "common/printable.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent {
namespace {

std::string CallerOf(grpc::CallbackServerContext* context) {
  return CallerIdentity(context->auth_context().get());
}

// Ends the call. A refusal or failure is logged, one line with the method,
// the caller and the reason, so an operator can reconstruct what the
// controller asked and what it was told (the text may echo what the caller
// sent: control characters are escaped and it is cut at 512 characters).
void Finish(grpc::ServerUnaryReactor* reactor, const char* method, const std::string& caller,
            const absl::Status& status) {
  if (!status.ok()) {
    spdlog::warn("{} for {} failed: {}: {}", method, PrintableText(caller),
                 absl::StatusCodeToString(status.code()), PrintableText(status.message(), 512));
  }
  reactor->Finish(ToGrpcStatus(status));
}

// True when nobody waits for the call's answer any more: its caller
// cancelled, or its deadline passed while it queued.
bool CallerGaveUp(grpc::CallbackServerContext* context) {
  return context->IsCancelled() || context->deadline() <= std::chrono::system_clock::now();
}

// Every pooled handler queues through here: work whose caller gave up while
// it waited for a worker is dropped, answered CANCELLED, never run (one debug
// line, not a warning each: a caller spraying short deadlines must not flood
// the log).
void Queue(WorkerPool& pool, grpc::CallbackServerContext* context,
           grpc::ServerUnaryReactor* reactor, const char* method, std::function<void()> work) {
  SubmitUnlessGaveUp(
      pool, [context] { return CallerGaveUp(context); }, std::move(work),
      [reactor, method] {
        spdlog::debug("{} dropped before it ran: its caller gave up while it queued", method);
        reactor->Finish(grpc::Status(
            grpc::StatusCode::CANCELLED,
            std::string(method) + " was dropped before it ran: the caller gave up (cancelled "
                                  "or past its deadline) while it queued"));
      });
}

// The reactor of a call that drives one endpoint for a while (its connect,
// its run). When gRPC cancels the call, because the controller's connection
// closed (a killed controller's sockets are closed by its kernel) or it gave
// up on its deadline, nobody will close the endpoint or read the run's
// result: it is closed at once, which cancels the run and frees the device,
// instead of holding it to the run's deadline and the lease after that. The
// close goes to the pool: freeing QPs or buffers must not hold a gRPC thread.
class EndpointCallReactor final : public grpc::ServerUnaryReactor {
 public:
  EndpointCallReactor(peer::EndpointRegistry& endpoints, WorkerPool& pool, const char* method,
                      std::string endpoint_id, std::string caller)
      : endpoints_(endpoints),
        pool_(pool),
        method_(method),
        endpoint_id_(std::move(endpoint_id)),
        caller_(std::move(caller)) {}

  void OnCancel() override {
    pool_.Submit([&endpoints = endpoints_, method = method_, id = endpoint_id_, caller = caller_] {
      if (!endpoints.Close(id, caller).ok()) return;  // closed already
      spdlog::warn(
          "endpoint {} closed: its {} call was cancelled (its controller {} went away or gave "
          "up)",
          PrintableText(id), method, PrintableText(caller));
    });
  }
  void OnDone() override { delete this; }

 private:
  peer::EndpointRegistry& endpoints_;
  WorkerPool& pool_;
  const char* const method_;
  const std::string endpoint_id_;
  const std::string caller_;
};

}  // namespace

NodeAgentService::NodeAgentService(AgentHandlers& handlers, peer::EndpointRegistry& endpoints,
                                   const peer::PortCounterReader& counters,
                                   CollectiveHandlers& collectives, UplinkHandlers& uplink,
                                   WorkerPool& pool, size_t max_long_calls)
    : handlers_(handlers),
      endpoints_(endpoints),
      counters_(counters),
      collectives_(collectives),
      uplink_(uplink),
      pool_(pool),
      long_calls_(max_long_calls) {}

NodeAgentService::~NodeAgentService() = default;

grpc::ServerUnaryReactor* NodeAgentService::GetVersion(grpc::CallbackServerContext* context,
                                                       const v1::GetVersionRequest* request,
                                                       v1::GetVersionResponse* response) {
  auto* reactor = context->DefaultReactor();
  *response = handlers_.GetVersion(*request);  // no I/O: answered on the gRPC thread
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::GetInventory(grpc::CallbackServerContext* context,
                                                         const v1::GetInventoryRequest* request,
                                                         v1::GetInventoryResponse* response) {
  auto* reactor = context->DefaultReactor();
  Queue(pool_, context, reactor, "GetInventory",
        [this, reactor, request, response, caller = CallerOf(context)] {
          auto result = handlers_.GetInventory(*request);
          if (result.ok()) *response = std::move(*result);
          Finish(reactor, "GetInventory", caller, result.status());
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::PrepareEndpoint(
    grpc::CallbackServerContext* context, const v1::PrepareEndpointRequest* request,
    v1::PrepareEndpointResponse* response) {
  auto* reactor = context->DefaultReactor();
  Queue(pool_, context, reactor, "PrepareEndpoint",
        [this, context, reactor, request, response, caller = CallerOf(context)] {
          // A caller that gave up while the endpoint was prepared could never
          // name it: it is closed, instead of holding its device for a whole lease
          // (one that gave up while the call queued never reaches here: Queue).
          auto result = endpoints_.Prepare(*request, caller);
          if (result.ok() && context->IsCancelled()) {
            endpoints_.Close(result->endpoint_id(), caller).IgnoreError();  // ours: cannot be gone
            result =
                absl::CancelledError("the caller gave up while the endpoint was prepared; closed");
          }
          if (result.ok()) *response = std::move(*result);
          Finish(reactor, "PrepareEndpoint", caller, result.status());
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::ConnectEndpoint(
    grpc::CallbackServerContext* context, const v1::ConnectEndpointRequest* request,
    v1::ConnectEndpointResponse* response) {
  auto* reactor = new EndpointCallReactor(endpoints_, pool_, "ConnectEndpoint",
                                          request->endpoint_id(), CallerOf(context));
  Queue(pool_, context, reactor, "ConnectEndpoint",
        [this, reactor, request, response, caller = CallerOf(context)] {
          auto result = endpoints_.Connect(*request, caller);
          if (result.ok()) *response = std::move(*result);
          Finish(reactor, "ConnectEndpoint", caller, result.status());
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::RunEndpoint(grpc::CallbackServerContext* context,
                                                        const v1::RunEndpointRequest* request,
                                                        v1::RunEndpointResponse* response) {
  auto* reactor = new EndpointCallReactor(endpoints_, pool_, "RunEndpoint", request->endpoint_id(),
                                          CallerOf(context));
  absl::Status started =
      long_calls_.Start([this, reactor, request, response, caller = CallerOf(context)] {
        auto result = endpoints_.Run(*request, caller);
        if (result.ok()) *response->mutable_result() = std::move(*result);
        Finish(reactor, "RunEndpoint", caller, result.status());
      });
  if (!started.ok()) Finish(reactor, "RunEndpoint", CallerOf(context), started);
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::ExchangeTime(grpc::CallbackServerContext* context,
                                                         const v1::ExchangeTimeRequest* request,
                                                         v1::ExchangeTimeResponse* response) {
  // t2 first, before anything else; no I/O, so answered on the gRPC thread.
  const absl::Time received = handlers_.Now();
  auto* reactor = context->DefaultReactor();
  *response = handlers_.ExchangeTime(*request, received);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::RunUplinkFlows(grpc::CallbackServerContext* context,
                                                           const v1::RunUplinkFlowsRequest* request,
                                                           v1::RunUplinkFlowsResponse* response) {
  auto* reactor = context->DefaultReactor();
  // As long as the flows run: a thread of its own, like a peer test's run.
  absl::Status started =
      long_calls_.Start([this, reactor, request, response, caller = CallerOf(context)] {
        auto result = uplink_.Run(*request);
        if (result.ok()) *response = std::move(*result);
        Finish(reactor, "RunUplinkFlows", caller, result.status());
      });
  if (!started.ok()) Finish(reactor, "RunUplinkFlows", CallerOf(context), started);
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::CloseEndpoint(grpc::CallbackServerContext* context,
                                                          const v1::CloseEndpointRequest* request,
                                                          v1::CloseEndpointResponse*) {
  auto* reactor = context->DefaultReactor();
  Queue(pool_, context, reactor, "CloseEndpoint",
        [this, reactor, request, caller = CallerOf(context)] {
          if (!request->endpoint_id().empty()) {
            return Finish(reactor, "CloseEndpoint", caller,
                          endpoints_.Close(request->endpoint_id(), caller));
          }
          if (request->test_id().empty()) {
            return Finish(
                reactor, "CloseEndpoint", caller,
                absl::InvalidArgumentError("CloseEndpoint names neither an endpoint_id nor a "
                                           "test_id: send the one to close"));
          }
          endpoints_.CloseTest(request->test_id(), caller);
          Finish(reactor, "CloseEndpoint", caller, absl::OkStatus());
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::GetEndpointProgress(
    grpc::CallbackServerContext* context, const v1::GetEndpointProgressRequest* request,
    v1::GetEndpointProgressResponse* response) {
  auto* reactor = context->DefaultReactor();
  // Atomic reads only: answered on the gRPC thread.
  auto progress = endpoints_.Progress(request->endpoint_id(), CallerOf(context));
  if (progress.ok()) *response->mutable_progress() = *progress;
  Finish(reactor, "GetEndpointProgress", CallerOf(context), progress.status());
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::ReadPortCounters(
    grpc::CallbackServerContext* context, const v1::ReadPortCountersRequest* request,
    v1::ReadPortCountersResponse* response) {
  auto* reactor = context->DefaultReactor();
  Queue(pool_, context, reactor, "ReadPortCounters",
        [this, reactor, request, response, caller = CallerOf(context)] {
          auto counters = counters_.Read(request->device(), request->port(), request->netdev());
          const absl::Status status = counters.status();
          if (counters.ok()) *response->mutable_counters() = *std::move(counters);
          Finish(reactor, "ReadPortCounters", caller, status);
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::StartCollective(
    grpc::CallbackServerContext* context, const v1::StartCollectiveRequest* request,
    v1::StartCollectiveResponse* response) {
  auto* reactor = context->DefaultReactor();
  // Spawns processes: off the gRPC thread.
  Queue(pool_, context, reactor, "StartCollective",
        [this, reactor, request, response, caller = CallerOf(context)] {
          auto result = collectives_.Start(*request, caller);
          if (result.ok()) *response = std::move(*result);
          Finish(reactor, "StartCollective", caller, result.status());
        });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::PollCollective(grpc::CallbackServerContext* context,
                                                           const v1::PollCollectiveRequest* request,
                                                           v1::PollCollectiveResponse* response) {
  auto* reactor = context->DefaultReactor();
  // No I/O: the job's own thread reads the workers; this only takes what it
  // gathered, so it is answered on the gRPC thread.
  auto result = collectives_.Poll(*request, CallerOf(context));
  if (result.ok()) *response = std::move(*result);
  Finish(reactor, "PollCollective", CallerOf(context), result.status());
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::StopCollective(grpc::CallbackServerContext* context,
                                                           const v1::StopCollectiveRequest* request,
                                                           v1::StopCollectiveResponse*) {
  auto* reactor = context->DefaultReactor();
  Queue(pool_, context, reactor, "StopCollective",
        [this, reactor, request, caller = CallerOf(context)] {  // kills and reaps
          Finish(reactor, "StopCollective", caller, collectives_.Stop(*request, caller));
        });
  return reactor;
}

}  // namespace clustercert::agent
