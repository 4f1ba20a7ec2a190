#pragma once

#include <string>

#include "grpcpp/security/auth_context.h"

namespace clustercert::agent {

// Who is calling, as the registries record it: each endpoint and collective
// job belongs to the caller that created it, and another caller is answered
// as if it did not exist. Under mutual TLS that is the verified client
// certificate's subject common name ("tls:CN=controller"), or its
// subjectAltNames when it has no CN ("tls:SAN=a,b"); without TLS (or with a
// context that authenticated nobody) every caller is "insecure", so on a
// plaintext agent only the ids' randomness separates callers.
// `context` is grpc::ServerContextBase::auth_context().get(); may be null.
std::string CallerIdentity(const grpc::AuthContext* context);

inline constexpr const char* kInsecureCaller = "insecure";

}  // namespace clustercert::agent
