#pragma once

#include <memory>

#include "agent/service/connection_gate.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_interceptor.h"

namespace clustercert::agent {

// Tells the gate that a call reached a handler: its connection completed the
// TLS handshake and passed PeerAuthProcessor (a refused call never gets
// here), so it stops counting as unauthenticated. Intercepts nothing.
class GateInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit GateInterceptorFactory(ConnectionGate& gate) : gate_(gate) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    gate_.MarkAuthenticated(info->server_context()->peer());
    return nullptr;
  }

 private:
  ConnectionGate& gate_;
};

}  // namespace clustercert::agent
