#include "agent/service/peer_auth_processor.h"

#include <vector>

#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent {
namespace {

// The property gRPC's TLS server sets to the client certificate it verified
// (GRPC_X509_PEM_CERT_PROPERTY_NAME); absent on a plaintext connection.
constexpr char kPemCertProperty[] = "x509_pem_cert";

std::string Join(const std::vector<grpc::string_ref>& values) {
  std::vector<std::string> quoted;
  for (const grpc::string_ref& value : values) {
    quoted.push_back(QuoteCertificateText(absl::string_view(value.data(), value.size())));
  }
  return absl::StrJoin(quoted, ", ");
}

grpc::Status Deny(const PeerAuthorizer& authorizer, const grpc::AuthContext& context,
                  absl::string_view method, const std::string& message) {
  // The certificate's own strings (quoted) as gRPC reports them, so the line
  // names the caller even when its certificate could not be parsed.
  spdlog::warn("refused {} (PERMISSION_DENIED) to CN=[{}] URI SANs [{}]; admitted: {}: {}",
               method.empty() ? "a call" : QuoteCertificateText(method),
               Join(context.FindPropertyValues("x509_common_name")),
               Join(context.FindPropertyValues("peer_uri")), authorizer.AllowedRolesText(),
               message);
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, message);
}

}  // namespace

grpc::Status AuthorizeCall(const PeerAuthorizer& authorizer, const grpc::AuthContext& context,
                           absl::string_view method) {
  const std::vector<grpc::string_ref> pems = context.FindPropertyValues(kPemCertProperty);
  if (pems.size() != 1) {
    return Deny(authorizer, context, method,
                "the caller presented no verified client certificate; this agent admits only " +
                    authorizer.AllowedRolesText() +
                    " over mutual TLS: run the controller with the certificate deploy/pki.sh "
                    "made for it");
  }
  absl::StatusOr<PeerIdentity> peer =
      PeerIdentityFromPem(absl::string_view(pems[0].data(), pems[0].size()));
  absl::Status decision = peer.ok() ? authorizer.Authorize(*peer) : peer.status();
  if (!decision.ok()) return Deny(authorizer, context, method, std::string(decision.message()));
  return grpc::Status::OK;
}

grpc::Status PeerAuthProcessor::Process(const InputMetadata& auth_metadata,
                                        grpc::AuthContext* context,
                                        OutputMetadata* /*consumed_auth_metadata*/,
                                        OutputMetadata* /*response_metadata*/) {
  absl::string_view method;
  if (auto path = auth_metadata.find(":path"); path != auth_metadata.end()) {
    method = absl::string_view(path->second.data(), path->second.size());
  }
  if (context == nullptr) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "the call carries no connection identity; this agent admits only " +
                            authorizer_.AllowedRolesText() + " over mutual TLS");
  }
  return AuthorizeCall(authorizer_, *context, method);
}

}  // namespace clustercert::agent
