#pragma once

#include "agent/service/agent_handlers.h"
#include "clustercert/v1/node_agent.grpc.pb.h"
#include "common/worker_pool.h"

namespace clustercert::agent {

// The gRPC adapter: each call is handed to the worker pool (so a slow sysfs
// or verbs read never blocks a gRPC thread) and finished from there.
class NodeAgentService final : public v1::NodeAgent::CallbackService {
 public:
  NodeAgentService(AgentHandlers& handlers, WorkerPool& pool);

  grpc::ServerUnaryReactor* GetVersion(grpc::CallbackServerContext* context,
                                       const v1::GetVersionRequest* request,
                                       v1::GetVersionResponse* response) override;
  grpc::ServerUnaryReactor* GetInventory(grpc::CallbackServerContext* context,
                                         const v1::GetInventoryRequest* request,
                                         v1::GetInventoryResponse* response) override;

 private:
  AgentHandlers& handlers_;
  WorkerPool& pool_;
};

}  // namespace clustercert::agent
