#include "agent/service/node_agent_service.h"

#include "common/grpc_status.h"

namespace clustercert::agent {

NodeAgentService::NodeAgentService(AgentHandlers& handlers, WorkerPool& pool)
    : handlers_(handlers), pool_(pool) {}

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

}  // namespace clustercert::agent
