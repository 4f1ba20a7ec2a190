// Agents' answers are untrusted (issue 34): the controller's channel to an
// agent refuses an answer marked compressed from its headers, because gRPC
// 1.51 inflates a whole message before its size check.
#include <future>
#include <memory>
#include <string>

#include "controller/client/grpc_agent_client.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace clustercert::controller {
namespace {

// An agent that answers GetInventory with 32 MiB of 'a' in gzip (about
// 32 KB on the wire): within the controller's 64 MiB limit once inflated.
class CompressingAgent final : public v1::NodeAgent::CallbackService {
  grpc::ServerUnaryReactor* GetInventory(grpc::CallbackServerContext* context,
                                         const v1::GetInventoryRequest*,
                                         v1::GetInventoryResponse* response) override {
    context->set_compression_algorithm(GRPC_COMPRESS_GZIP);
    response->mutable_inventory()->set_node_name(std::string(32 << 20, 'a'));
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

TEST(AgentChannelCompressionTest, ACompressedAnswerFailsTheCall) {
  CompressingAgent agent;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&agent);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);

  plan::AgentSettings settings;
  settings.insecure = true;
  auto factory = GrpcAgentClientFactory::Create(settings);
  ASSERT_TRUE(factory.ok()) << factory.status();
  std::unique_ptr<AgentClient> client = factory->Connect("127.0.0.1:" + std::to_string(port));
  std::promise<absl::Status> answered;
  client->GetInventory(v1::GetInventoryRequest(), absl::Seconds(10),
                       [&answered](absl::StatusOr<v1::GetInventoryResponse> response, CallTiming) {
                         answered.set_value(response.status());
                       });
  const absl::Status status = answered.get_future().get();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("ompression"), std::string::npos) << status;
  server->Shutdown();
}

}  // namespace
}  // namespace clustercert::controller
