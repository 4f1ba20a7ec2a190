#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// Ed25519 signing of certificates through OpenSSL (docs/certificate.md).
//
// The signed bytes are the deterministic protobuf encoding of the whole
// certificate with `signature.value` empty; `signature.sections` holds a
// SHA-256 per part (header, plan_yaml, each node, each pair cell, ...) so
// that a failed check can say which part was edited.

// Writes a new key pair: the private key to `prefix` (PKCS#8 PEM, mode 0600)
// and the public key to `prefix`.pub (SubjectPublicKeyInfo PEM). Refuses to
// overwrite either file.
absl::Status GenerateSigningKey(const std::string& prefix);

// "SHA256:<64 hex>" of the raw 32-byte Ed25519 public key in `public_key_pem`.
absl::StatusOr<std::string> PublicKeyFingerprint(const std::string& public_key_pem);

// Reads a public key file (PEM) and returns its text; errors name the file.
absl::StatusOr<std::string> ReadPublicKeyFile(const std::string& path);

// Signs `certificate` in place with the private key in `private_key_path`.
absl::Status SignCertificate(v1::Certificate& certificate, const std::string& private_key_path);

// The per-part digests of a certificate as SignCertificate records them.
std::vector<v1::SectionDigest> SectionDigests(const v1::Certificate& certificate);

struct SignatureCheck {
  bool is_signed = false;
  bool valid = false;                 // signature verifies and every digest matches
  std::string fingerprint;            // of the key that verified (or was recorded)
  bool checked_against_given_key = false;
  std::vector<std::string> problems;  // sentences: what is wrong and what to do
};

// Verifies the signature. With `trusted_public_key_pem` the certificate must
// be signed by that key; without it the key embedded in the certificate is
// used (integrity only: that proves no edit, not who signed).
SignatureCheck CheckSignature(const v1::Certificate& certificate,
                              const std::optional<std::string>& trusted_public_key_pem);

}  // namespace clustercert::controller
