#include "agent/service/node_agent_service.h"

#include "common/grpc_status.h"

namespace clustercert::agent {

NodeAgentService::NodeAgentService(AgentHandlers& handlers, peer::EndpointRegistry& endpoints,
                                   const peer::PortCounterReader& counters,
                                   CollectiveHandlers& collectives, UplinkHandlers& uplink,
                                   WorkerPool& pool)
    : handlers_(handlers),
      endpoints_(endpoints),
      counters_(counters),
      collectives_(collectives),
      uplink_(uplink),
      pool_(pool) {}

NodeAgentService::~NodeAgentService() {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  for (auto& run : runs_) run.thread.join();
}

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
  pool_.Submit([this, reactor, request, response] {
    auto result = handlers_.GetInventory(*request);
    if (result.ok()) *response = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::PrepareEndpoint(
    grpc::CallbackServerContext* context, const v1::PrepareEndpointRequest* request,
    v1::PrepareEndpointResponse* response) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit([this, reactor, request, response] {
    auto result = endpoints_.Prepare(*request);
    if (result.ok()) *response = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::ConnectEndpoint(
    grpc::CallbackServerContext* context, const v1::ConnectEndpointRequest* request,
    v1::ConnectEndpointResponse*) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit(
      [this, reactor, request] { reactor->Finish(ToGrpcStatus(endpoints_.Connect(*request))); });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::RunEndpoint(grpc::CallbackServerContext* context,
                                                        const v1::RunEndpointRequest* request,
                                                        v1::RunEndpointResponse* response) {
  auto* reactor = context->DefaultReactor();
  StartLongRun([this, reactor, request, response] {
    auto result = endpoints_.Run(*request);
    if (result.ok()) *response->mutable_result() = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

void NodeAgentService::StartLongRun(std::function<void()> run) {
  std::lock_guard<std::mutex> lock(runs_mutex_);
  // Join the runs that have finished, so a long-lived agent keeps no dead threads.
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = runs_.erase(it);
    } else {
      ++it;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  runs_.push_back({std::thread([run = std::move(run), done] {
                     run();
                     done->store(true);
                   }),
                   done});
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

grpc::ServerUnaryReactor* NodeAgentService::RunUplinkFlows(
    grpc::CallbackServerContext* context, const v1::RunUplinkFlowsRequest* request,
    v1::RunUplinkFlowsResponse* response) {
  auto* reactor = context->DefaultReactor();
  // As long as the flows run: a thread of its own, like a peer test's run.
  StartLongRun([this, reactor, request, response] {
    auto result = uplink_.Run(*request);
    if (result.ok()) *response = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::CloseEndpoint(grpc::CallbackServerContext* context,
                                                          const v1::CloseEndpointRequest* request,
                                                          v1::CloseEndpointResponse*) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit([this, reactor, request] {
    reactor->Finish(ToGrpcStatus(endpoints_.Close(request->endpoint_id())));
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::GetEndpointProgress(
    grpc::CallbackServerContext* context, const v1::GetEndpointProgressRequest* request,
    v1::GetEndpointProgressResponse* response) {
  auto* reactor = context->DefaultReactor();
  // Atomic reads only: answered on the gRPC thread.
  auto progress = endpoints_.Progress(request->endpoint_id());
  if (progress.ok()) *response->mutable_progress() = *progress;
  reactor->Finish(ToGrpcStatus(progress.status()));
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::ReadPortCounters(
    grpc::CallbackServerContext* context, const v1::ReadPortCountersRequest* request,
    v1::ReadPortCountersResponse* response) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit([this, reactor, request, response] {
    *response->mutable_counters() =
        counters_.Read(request->device(), request->port(), request->netdev());
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::StartCollective(
    grpc::CallbackServerContext* context, const v1::StartCollectiveRequest* request,
    v1::StartCollectiveResponse* response) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit([this, reactor, request, response] {  // spawns processes: off the gRPC thread
    auto result = collectives_.Start(*request);
    if (result.ok()) *response = std::move(*result);
    reactor->Finish(ToGrpcStatus(result.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::PollCollective(grpc::CallbackServerContext* context,
                                                           const v1::PollCollectiveRequest* request,
                                                           v1::PollCollectiveResponse* response) {
  auto* reactor = context->DefaultReactor();
  // No I/O: the job's own thread reads the workers; this only takes what it
  // gathered, so it is answered on the gRPC thread.
  auto result = collectives_.Poll(*request);
  if (result.ok()) *response = std::move(*result);
  reactor->Finish(ToGrpcStatus(result.status()));
  return reactor;
}

grpc::ServerUnaryReactor* NodeAgentService::StopCollective(grpc::CallbackServerContext* context,
                                                           const v1::StopCollectiveRequest* request,
                                                           v1::StopCollectiveResponse*) {
  auto* reactor = context->DefaultReactor();
  pool_.Submit([this, reactor, request] {  // kills and reaps: off the gRPC thread
    reactor->Finish(ToGrpcStatus(collectives_.Stop(*request)));
  });
  return reactor;
}

}  // namespace clustercert::agent
