#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/certificate/trusted_keys.h"

namespace clustercert::controller {

// Ed25519 signing of certificates through OpenSSL (docs/certificate.md).
//
// The signed bytes are the deterministic protobuf encoding of the whole
// certificate with `signature.value` empty; `signature.sections` holds a
// SHA-256 per part (header, plan_yaml, each node, each pair cell, ...) so
// that a failed check can say which part was edited.

// The most a key file may hold: a PEM Ed25519 key is about 120 bytes, so a
// larger file is not one, and a trust directory or plan must not make the
// controller read a huge file (or /dev/zero) to find that out.
inline constexpr size_t kMaxKeyFileBytes = size_t{16} * 1024;

// Writes a new key pair: the private key to `prefix` (PKCS#8 PEM, mode 0600)
// and the public key to `prefix`.pub (SubjectPublicKeyInfo PEM). Refuses to
// overwrite either file.
absl::Status GenerateSigningKey(const std::string& prefix);

// "SHA256:<64 hex>" of the raw 32-byte Ed25519 public key in `public_key_pem`.
absl::StatusOr<std::string> PublicKeyFingerprint(const std::string& public_key_pem);

// Reads a public key file (PEM) and returns its text; errors name the file.
absl::StatusOr<std::string> ReadPublicKeyFile(const std::string& path);

// The public key (PEM) of the private signing key at `private_key_path`.
absl::StatusOr<std::string> PublicKeyOfSigningKey(const std::string& private_key_path);

// Signs `certificate` in place with the private key in `private_key_path`.
absl::Status SignCertificate(v1::Certificate& certificate, const std::string& private_key_path);

// The per-part digests of a certificate as SignCertificate records them.
std::vector<v1::SectionDigest> SectionDigests(const v1::Certificate& certificate);

// What a signature shows. `intact` alone proves only that nobody changed the
// certificate since *someone* signed it: an attacker who edits a certificate
// re-signs it with a fresh key and embeds that key, and the result is intact.
// Only `valid` (intact and signed by a trusted key) says the cluster's owner
// signed it.
struct SignatureCheck {
  bool is_signed = false;
  bool intact = false;                // the signature and every part digest match the content
  bool trusted = false;               // the signer's key is one of the caller's trusted keys
  bool valid = false;                 // intact && trusted
  std::string fingerprint;            // the signer's key: the embedded key's, else the recorded one
  std::string trusted_by;             // the file that made the signer trusted (when trusted)
  std::vector<std::string> problems;  // why it is not intact: what is wrong and what to do
  std::string untrusted;              // why the signer is not trusted, with the fix
};

// Checks that the signature matches the content (against the embedded key,
// whose fingerprint must be the recorded one) and whether that key is one of
// `trusted`. With no trusted key a certificate can be intact, never valid.
SignatureCheck CheckSignature(const v1::Certificate& certificate, const TrustedKeys& trusted);

}  // namespace clustercert::controller
