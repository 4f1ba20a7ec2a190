#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace clustercert::agent {

// The URI SAN prefix that names a certificate's role; deploy/pki.sh writes
// urn:clustercert:role:controller and urn:clustercert:role:node.
inline constexpr absl::string_view kRoleUriPrefix = "urn:clustercert:role:";

// What authorisation reads from a caller's client certificate, which the TLS
// handshake has already verified against the cluster CA. The common name is
// for messages only: the decision rests on the role URIs and the EKU.
struct PeerIdentity {
  std::string common_name;
  std::vector<std::string> uri_sans;  // every URI SAN, in certificate order
  bool client_auth = false;           // the EKU extension is present and lists clientAuth
};

// Reads the identity from the PEM certificate gRPC hands the server
// (AuthContext property x509_pem_cert). An unreadable certificate is an
// error, never an empty identity that a caller could hide behind.
absl::StatusOr<PeerIdentity> PeerIdentityFromPem(absl::string_view pem);

// The roles a certificate carries: the <role> of each URI SAN
// urn:clustercert:role:<role> whose role is a valid role name.
std::vector<std::string> RolesOf(const PeerIdentity& peer);

// Role names are [a-z0-9-]+, at most 64 characters.
absl::Status ValidateRoleName(absl::string_view role);

// Parses node-agent --allow-roles: ROLE[,ROLE...], each a valid name.
absl::StatusOr<std::vector<std::string>> ParseRoleList(absl::string_view text);

// Decides whether a verified caller may drive this agent: it must hold a
// client certificate (EKU clientAuth) that carries one of the admitted roles.
// Everything signed by the cluster CA passes the handshake, node certificates
// included, so the CA alone must not decide: one compromised node would
// otherwise be root on every other. Plain class, no gRPC: the server's
// AuthMetadataProcessor (peer_auth_processor.h) adapts it.
class PeerAuthorizer {
 public:
  // Fails unless `allowed_roles` is a non-empty list of valid role names.
  static absl::StatusOr<PeerAuthorizer> Create(std::vector<std::string> allowed_roles);

  // OK when `peer` is admitted; otherwise PERMISSION_DENIED with a sentence
  // naming the certificate, what it carries, what this agent admits and the fix.
  absl::Status Authorize(const PeerIdentity& peer) const;

  const std::vector<std::string>& allowed_roles() const { return allowed_roles_; }
  // "role controller" or "roles controller, monitor", for messages.
  std::string AllowedRolesText() const;

 private:
  explicit PeerAuthorizer(std::vector<std::string> allowed_roles)
      : allowed_roles_(std::move(allowed_roles)) {}

  std::vector<std::string> allowed_roles_;
};

// A certificate string (CN, SAN) made safe to quote in a message or a log
// line: non-printable bytes escaped, length bounded. Certificates are signed,
// not trusted: a CN can hold a newline that forges a log line.
std::string QuoteCertificateText(absl::string_view text);

}  // namespace clustercert::agent
