#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace clustercert {

// The three PEM files of a mutual-TLS identity: our CA, our certificate and
// its private key. deploy/pki.sh makes them: the controller presents a client
// certificate (EKU clientAuth, role controller), each agent a server
// certificate (EKU serverAuth, role node) for the addresses it serves on;
// both verify the peer against the cluster CA, and the agent then checks the
// caller's role (agent/service/peer_authorizer.h).
struct TlsPaths {
  std::string ca;
  std::string cert;
  std::string key;
};

struct TlsMaterial {
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
};

// Reads the files; errors name the file, the role and how to make it.
absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsPaths& paths);

// Server side: requires and verifies a client certificate (the handshake
// refuses one from another CA, or one without EKU clientAuth).
std::shared_ptr<grpc::ServerCredentials> MutualTlsServerCredentials(const TlsMaterial& material);
// Client side: presents our certificate and verifies the server's against the CA.
std::shared_ptr<grpc::ChannelCredentials> MutualTlsChannelCredentials(const TlsMaterial& material);

}  // namespace clustercert
