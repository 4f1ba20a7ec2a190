#pragma once

#include <cstddef>

#include "agent/peer/endpoint_registry.h"
#include "agent/peer/port_counters.h"
#include "agent/service/agent_handlers.h"
#include "agent/service/collective_handlers.h"
#include "agent/service/long_calls.h"
#include "agent/service/uplink_handlers.h"
#include "clustercert/v1/node_agent.grpc.pb.h"
#include "common/worker_pool.h"

namespace clustercert::agent {

// The gRPC adapter: each call is handed to the worker pool (so a slow sysfs
// or verbs read never blocks a gRPC thread) and finished from there. A peer
// test's run or uplink flows, which last as long as the test, get a thread of
// their own (LongCalls, at most `max_long_calls` at once). Endpoints and
// collective jobs belong to the caller that made them (CallerIdentity).
class NodeAgentService final : public v1::NodeAgent::CallbackService {
 public:
  NodeAgentService(AgentHandlers& handlers, peer::EndpointRegistry& endpoints,
                   const peer::PortCounterReader& counters, CollectiveHandlers& collectives,
                   UplinkHandlers& uplink, WorkerPool& pool,
                   size_t max_long_calls = LongCalls::kDefaultMaxRunning);
  ~NodeAgentService() override;

  grpc::ServerUnaryReactor* GetVersion(grpc::CallbackServerContext* context,
                                       const v1::GetVersionRequest* request,
                                       v1::GetVersionResponse* response) override;
  grpc::ServerUnaryReactor* GetInventory(grpc::CallbackServerContext* context,
                                         const v1::GetInventoryRequest* request,
                                         v1::GetInventoryResponse* response) override;
  grpc::ServerUnaryReactor* PrepareEndpoint(grpc::CallbackServerContext* context,
                                            const v1::PrepareEndpointRequest* request,
                                            v1::PrepareEndpointResponse* response) override;
  grpc::ServerUnaryReactor* ConnectEndpoint(grpc::CallbackServerContext* context,
                                            const v1::ConnectEndpointRequest* request,
                                            v1::ConnectEndpointResponse* response) override;
  grpc::ServerUnaryReactor* RunEndpoint(grpc::CallbackServerContext* context,
                                        const v1::RunEndpointRequest* request,
                                        v1::RunEndpointResponse* response) override;
  grpc::ServerUnaryReactor* CloseEndpoint(grpc::CallbackServerContext* context,
                                          const v1::CloseEndpointRequest* request,
                                          v1::CloseEndpointResponse* response) override;
  grpc::ServerUnaryReactor* GetEndpointProgress(grpc::CallbackServerContext* context,
                                                const v1::GetEndpointProgressRequest* request,
                                                v1::GetEndpointProgressResponse* response) override;
  grpc::ServerUnaryReactor* ReadPortCounters(grpc::CallbackServerContext* context,
                                             const v1::ReadPortCountersRequest* request,
                                             v1::ReadPortCountersResponse* response) override;
  grpc::ServerUnaryReactor* StartCollective(grpc::CallbackServerContext* context,
                                            const v1::StartCollectiveRequest* request,
                                            v1::StartCollectiveResponse* response) override;
  grpc::ServerUnaryReactor* PollCollective(grpc::CallbackServerContext* context,
                                           const v1::PollCollectiveRequest* request,
                                           v1::PollCollectiveResponse* response) override;
  grpc::ServerUnaryReactor* StopCollective(grpc::CallbackServerContext* context,
                                           const v1::StopCollectiveRequest* request,
                                           v1::StopCollectiveResponse* response) override;
  grpc::ServerUnaryReactor* ExchangeTime(grpc::CallbackServerContext* context,
                                         const v1::ExchangeTimeRequest* request,
                                         v1::ExchangeTimeResponse* response) override;
  grpc::ServerUnaryReactor* RunUplinkFlows(grpc::CallbackServerContext* context,
                                           const v1::RunUplinkFlowsRequest* request,
                                           v1::RunUplinkFlowsResponse* response) override;

 private:
  AgentHandlers& handlers_;
  peer::EndpointRegistry& endpoints_;
  const peer::PortCounterReader& counters_;
  CollectiveHandlers& collectives_;
  UplinkHandlers& uplink_;
  WorkerPool& pool_;
  LongCalls long_calls_;  // last: its destructor joins runs that use the members above
};

}  // namespace clustercert::agent
