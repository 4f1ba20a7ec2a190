#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace clustercert {

// The three PEM files of a mutual-TLS identity: our CA, our certificate and
// its private key. Agents and the controller both present a certificate
// signed by the cluster CA (deploy/pki.sh makes them) and both verify the peer.
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

// Server side: requires and verifies a client certificate.
std::shared_ptr<grpc::ServerCredentials> MutualTlsServerCredentials(const TlsMaterial& material);
// Client side: presents our certificate and verifies the server's against the CA.
std::shared_ptr<grpc::ChannelCredentials> MutualTlsChannelCredentials(const TlsMaterial& material);

}  // namespace clustercert
