#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "agent/service/peer_authorizer.h"
#include "grpcpp/security/auth_context.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/support/status.h"

namespace clustercert::agent {

// Authorises one call from its connection's AuthContext: reads the verified
// client certificate (x509_pem_cert) and asks the PeerAuthorizer. A denial is
// PERMISSION_DENIED with the authoriser's sentence and one warning log line
// naming the caller (CN, URI SANs), the method and the admitted roles.
// `method` is the call's path when known, for the log only.
grpc::Status AuthorizeCall(const PeerAuthorizer& authorizer, const grpc::AuthContext& context,
                           absl::string_view method);

// Runs AuthorizeCall before every call reaches a handler: installed on the
// server credentials (ServerCredentials::SetAuthMetadataProcessor), gRPC's
// server auth filter calls it for each call and fails the call with its
// status, so no handler can forget the check.
class PeerAuthProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit PeerAuthProcessor(PeerAuthorizer authorizer) : authorizer_(std::move(authorizer)) {}

  // Parsing one certificate and comparing a few strings never blocks, so
  // gRPC may run it inline on its own thread rather than hand it to a pool.
  bool IsBlocking() const override { return false; }

  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const PeerAuthorizer authorizer_;
};

}  // namespace clustercert::agent
