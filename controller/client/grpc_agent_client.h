#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "clustercert/v1/node_agent.grpc.pb.h"
#include "controller/client/agent_client.h"
#include "controller/plan/plan.h"
#include "grpcpp/grpcpp.h"

namespace clustercert::controller {

// AgentClient over a gRPC channel (callback API, one channel per agent).
class GrpcAgentClient final : public AgentClient {
 public:
  explicit GrpcAgentClient(std::shared_ptr<grpc::Channel> channel);

  void GetVersion(absl::Duration timeout, AgentCallback<v1::GetVersionResponse> done) override;
  void GetInventory(const v1::GetInventoryRequest& request, absl::Duration timeout,
                    AgentCallback<v1::GetInventoryResponse> done) override;
  void PrepareEndpoint(const v1::PrepareEndpointRequest& request, absl::Duration timeout,
                       AgentCallback<v1::PrepareEndpointResponse> done) override;
  void ConnectEndpoint(const v1::ConnectEndpointRequest& request, absl::Duration timeout,
                       AgentCallback<v1::ConnectEndpointResponse> done) override;
  void RunEndpoint(const v1::RunEndpointRequest& request, absl::Duration timeout,
                   AgentCallback<v1::RunEndpointResponse> done) override;
  void CloseEndpoint(const v1::CloseEndpointRequest& request, absl::Duration timeout,
                     AgentCallback<v1::CloseEndpointResponse> done) override;
  void GetEndpointProgress(const v1::GetEndpointProgressRequest& request, absl::Duration timeout,
                           AgentCallback<v1::GetEndpointProgressResponse> done) override;
  void ReadPortCounters(const v1::ReadPortCountersRequest& request, absl::Duration timeout,
                        AgentCallback<v1::ReadPortCountersResponse> done) override;
  void StartCollective(const v1::StartCollectiveRequest& request, absl::Duration timeout,
                       AgentCallback<v1::StartCollectiveResponse> done) override;
  void PollCollective(const v1::PollCollectiveRequest& request, absl::Duration timeout,
                      AgentCallback<v1::PollCollectiveResponse> done) override;
  void StopCollective(const v1::StopCollectiveRequest& request, absl::Duration timeout,
                      AgentCallback<v1::StopCollectiveResponse> done) override;
  void ExchangeTime(const v1::ExchangeTimeRequest& request, absl::Duration timeout,
                    AgentCallback<v1::ExchangeTimeResponse> done) override;
  void RunUplinkFlows(const v1::RunUplinkFlowsRequest& request, absl::Duration timeout,
                      AgentCallback<v1::RunUplinkFlowsResponse> done) override;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::NodeAgent::Stub> stub_;
};

// Makes clients for a plan's agents with one set of credentials: mutual TLS
// from the plan's agents.tls files, or plaintext when agents.insecure is set.
class GrpcAgentClientFactory {
 public:
  static absl::StatusOr<GrpcAgentClientFactory> Create(const plan::AgentSettings& settings);
  std::unique_ptr<AgentClient> Connect(const std::string& address) const;

 private:
  explicit GrpcAgentClientFactory(std::shared_ptr<grpc::ChannelCredentials> credentials)
      : credentials_(std::move(credentials)) {}
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
};

}  // namespace clustercert::controller
