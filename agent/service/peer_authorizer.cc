#include "agent/service/peer_authorizer.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace clustercert::agent {
namespace {

// A client certificate chain is a few KiB; anything far larger is not one.
constexpr size_t kMaxPemBytes = 64 * 1024;
constexpr size_t kMaxRoleLength = 64;
constexpr size_t kMaxQuotedLength = 128;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct GeneralNamesFree {
  void operator()(GENERAL_NAMES* names) const { GENERAL_NAMES_free(names); }
};

std::string Asn1Bytes(const ASN1_STRING* text) {
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                     static_cast<size_t>(ASN1_STRING_length(text)));
}

// The last CN of the subject, as UTF-8 (the most specific one, as OpenSSL's
// own name checks take it).
std::string CommonName(X509* cert) {
  const X509_NAME* subject = X509_get_subject_name(cert);
  if (subject == nullptr) return "";
  int index = -1;
  int last = -1;
  while ((index = X509_NAME_get_index_by_NID(subject, NID_commonName, index)) >= 0) last = index;
  if (last < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, last));
  unsigned char* utf8 = nullptr;
  const int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return Asn1Bytes(data);
  std::string name(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
  OPENSSL_free(utf8);
  return name;
}

std::string PeerName(const PeerIdentity& peer) {
  return peer.common_name.empty() ? std::string("with no CN")
                                  : absl::StrCat("CN=", QuoteCertificateText(peer.common_name));
}

}  // namespace

std::string QuoteCertificateText(absl::string_view text) {
  const bool cut = text.size() > kMaxQuotedLength;
  std::string quoted = absl::CHexEscape(text.substr(0, kMaxQuotedLength));
  if (cut) quoted += "...";
  return quoted;
}

absl::StatusOr<PeerIdentity> PeerIdentityFromPem(absl::string_view pem) {
  if (pem.empty() || pem.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the verified client certificate is ", pem.size(),
                     " bytes of PEM, not one certificate ", "of at most ", kMaxPemBytes,
                     " bytes: give the controller the certificate deploy/pki.sh "
                     "made for it"));
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::unique_ptr<X509, X509Free> cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)
                                           : nullptr);
  if (!cert) {
    return absl::InvalidArgumentError(
        "the verified client certificate is not a readable PEM X.509 certificate: give the "
        "controller the certificate deploy/pki.sh made for it");
  }
  PeerIdentity peer;
  peer.common_name = CommonName(cert.get());

  // X509_get_extension_flags parses the extensions once; EXFLAG_XKUSAGE says
  // an EKU extension is present, without which the certificate states no
  // purpose and so is not a client certificate here.
  const uint32_t flags = X509_get_extension_flags(cert.get());
  if ((flags & EXFLAG_INVALID) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the client certificate ", PeerName(peer),
                     " has malformed extensions: re-issue it with deploy/pki.sh"));
  }
  peer.client_auth = (flags & EXFLAG_XKUSAGE) != 0 &&
                     (X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT) != 0;

  int critical = 0;
  std::unique_ptr<GENERAL_NAMES, GeneralNamesFree> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, &critical, nullptr)));
  if (!names && critical == -2) {
    // Two SAN extensions: which one names the role would be a guess.
    return absl::InvalidArgumentError(absl::StrCat(
        "the client certificate ", PeerName(peer),
        " has more than one subjectAltName extension: re-issue it with deploy/pki.sh"));
  }
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
      if (name->type == GEN_URI)
        peer.uri_sans.push_back(Asn1Bytes(name->d.uniformResourceIdentifier));
    }
  }
  return peer;
}

absl::Status ValidateRoleName(absl::string_view role) {
  const bool valid_chars = std::all_of(role.begin(), role.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (role.empty() || role.size() > kMaxRoleLength || !valid_chars) {
    return absl::InvalidArgumentError(
        absl::StrCat("the role '", QuoteCertificateText(role), "' is not a role name: use 1 to ",
                     kMaxRoleLength, " lower-case letters, digits and '-', e.g. controller"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseRoleList(absl::string_view text) {
  std::vector<std::string> roles;
  for (absl::string_view role : absl::StrSplit(text, ',')) {
    if (absl::Status status = ValidateRoleName(role); !status.ok()) return status;
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) roles.emplace_back(role);
  }
  return roles;
}

std::vector<std::string> RolesOf(const PeerIdentity& peer) {
  std::vector<std::string> roles;
  for (const std::string& uri : peer.uri_sans) {
    if (!absl::StartsWith(uri, kRoleUriPrefix)) continue;
    absl::string_view role = absl::string_view(uri).substr(kRoleUriPrefix.size());
    if (ValidateRoleName(role).ok()) roles.emplace_back(role);
  }
  return roles;
}

absl::StatusOr<PeerAuthorizer> PeerAuthorizer::Create(std::vector<std::string> allowed_roles) {
  if (allowed_roles.empty()) {
    return absl::InvalidArgumentError(
        "no role is admitted, so no caller could drive this agent: admit at least one role, "
        "e.g. controller");
  }
  for (const std::string& role : allowed_roles) {
    if (absl::Status status = ValidateRoleName(role); !status.ok()) return status;
  }
  return PeerAuthorizer(std::move(allowed_roles));
}

std::string PeerAuthorizer::AllowedRolesText() const {
  return absl::StrCat(allowed_roles_.size() == 1 ? "role " : "roles ",
                      absl::StrJoin(allowed_roles_, ", "));
}

absl::Status PeerAuthorizer::Authorize(const PeerIdentity& peer) const {
  const std::string admits = absl::StrCat("this agent admits only ", AllowedRolesText());
  const std::string fix = "run the controller with the certificate deploy/pki.sh made for it";
  if (!peer.client_auth) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the client certificate ", PeerName(peer),
        " is not a client certificate (its extended key usage does not list clientAuth); ", admits,
        ": ", fix));
  }
  const std::vector<std::string> roles = RolesOf(peer);
  for (const std::string& role : roles) {
    if (std::find(allowed_roles_.begin(), allowed_roles_.end(), role) != allowed_roles_.end()) {
      return absl::OkStatus();
    }
  }
  if (roles.empty()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the client certificate ", PeerName(peer), " carries no role (no URI SAN ", kRoleUriPrefix,
        "<role>; an older deploy/pki.sh made it); ", admits,
        ": re-issue it with deploy/pki.sh (move the old .pem and .key aside first) and ", fix));
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "the client certificate ", PeerName(peer), " carries ",
      roles.size() == 1 ? "role " : "roles ", absl::StrJoin(roles, ", "), "; ", admits, ": ", fix));
}

}  // namespace clustercert::agent
