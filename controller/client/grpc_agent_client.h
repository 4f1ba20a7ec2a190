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
  CLUSTERCERT_AGENT_REQUEST_RPCS(CLUSTERCERT_AGENT_RPC_OVERRIDE)

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
