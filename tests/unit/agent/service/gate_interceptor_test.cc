// The gate in front of a real gRPC server, wired as agent/main.cc wires it:
// connections through the external-connection acceptor, and a call that
// reaches a handler marks its connection authenticated.
#include "agent/service/gate_interceptor.h"

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "agent/service/connection_gate.h"
#include "clustercert/v1/node_agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace clustercert::agent {
namespace {

class VersionOnly final : public v1::NodeAgent::CallbackService {
  grpc::ServerUnaryReactor* GetVersion(grpc::CallbackServerContext* context,
                                       const v1::GetVersionRequest*,
                                       v1::GetVersionResponse* response) override {
    response->set_agent_version("test");
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

TEST(GateInterceptorTest, ACallThroughTheGateMarksItsConnectionAuthenticated) {
  auto gate = ConnectionGate::Listen("127.0.0.1", 0, {});
  ASSERT_TRUE(gate.ok()) << gate.status();
  VersionOnly service;
  grpc::ServerBuilder builder;
  auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD,
      grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<GateInterceptorFactory>(**gate));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  (*gate)->Start([&acceptor](int listener_fd, int fd) {
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters connection;
    connection.listener_fd = listener_fd;
    connection.fd = fd;
    acceptor->HandleNewConnection(&connection);
  });

  auto stub = v1::NodeAgent::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string((*gate)->port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetVersionResponse response;
  ASSERT_TRUE(stub->GetVersion(&context, v1::GetVersionRequest(), &response).ok());
  EXPECT_EQ(response.agent_version(), "test");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((*gate)->stats().unauthenticated > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ((*gate)->stats().accepted, 1u);
  EXPECT_EQ((*gate)->stats().authenticated, 1u);
  EXPECT_EQ((*gate)->stats().unauthenticated, 0u);
  (*gate)->Stop();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace
}  // namespace clustercert::agent
