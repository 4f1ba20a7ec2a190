#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert::controller {

// Where `controller verify` looks for trusted keys when neither --pubkey nor
// --trust-dir is given (used only when it exists).
inline constexpr char kDefaultTrustDir[] = "/etc/clustercert/trusted-keys";

// The Ed25519 public keys whose signatures a verifier accepts as "signed by
// the cluster". A certificate embeds the key that signed it, but that key
// proves nothing about who signed: whoever edits a certificate can re-sign it
// with a fresh key and embed that one. Only a key the verifier already holds
// (--pubkey, a trust directory, the plan's own signing key) says who signed.
// Keys are matched by fingerprint (SHA-256 of the raw public key), so two
// files holding the same key are one key.
class TrustedKeys {
 public:
  struct Key {
    std::string fingerprint;  // "SHA256:<64 hex>"
    std::string pem;          // SubjectPublicKeyInfo PEM, as keygen writes it
    std::string source;       // the file it came from, for messages
  };

  // Trusts nothing; `suggested_dir` is the directory the fix names
  // (normally kDefaultTrustDir).
  explicit TrustedKeys(std::string suggested_dir = kDefaultTrustDir);

  // The one key in `path` (--pubkey): a certificate must be signed by it. A
  // regular file of at most kMaxKeyFileBytes; a FIFO or device is refused.
  static absl::StatusOr<TrustedKeys> FromPublicKeyFile(const std::string& path);
  // Every *.pub file in `dir` (other files are ignored, so a README may sit
  // there). The directory and each key must be owned by root or by the user
  // running the controller and not be writable by group or others (whoever
  // can write them decides what is trusted); each key must be a regular file
  // (a symlink to one is followed, its target checked) of at most
  // kMaxKeyFileBytes. Refuses a .pub that is not an Ed25519 public key, and a
  // directory with more than kMaxDirectoryKeys keys.
  static absl::StatusOr<TrustedKeys> FromDirectory(const std::string& dir);
  // The public half of the private key at `private_key_path`: what a
  // re-certification signed with that key may carry results over from.
  static absl::StatusOr<TrustedKeys> FromSigningKey(const std::string& private_key_path);

  static constexpr size_t kMaxDirectoryKeys = 1000;

  // The trusted key with `fingerprint`, or nullptr.
  const Key* Find(const std::string& fingerprint) const;
  bool empty() const { return keys_.empty(); }
  size_t size() const { return keys_.size(); }

  // A sentence on why a signature by `fingerprint` is not trusted, with the
  // fix ("pass the cluster's public key with --pubkey FILE or add it to DIR").
  std::string WhyNotTrusted(const std::string& fingerprint) const;

 private:
  enum class Origin { kNone, kPublicKeyFile, kDirectory, kSigningKey };

  TrustedKeys(Origin origin, std::string where);
  absl::Status Add(const std::string& pem, const std::string& source);

  Origin origin_ = Origin::kNone;
  std::string where_;  // the file or directory the keys came from, or the suggested directory
  std::vector<Key> keys_;
};

}  // namespace clustercert::controller
