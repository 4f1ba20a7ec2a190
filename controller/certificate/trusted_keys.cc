#include "controller/certificate/trusted_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/unique_fd.h"
#include "controller/certificate/certificate_signer.h"

namespace clustercert::controller {
namespace {

namespace fs = std::filesystem;

// A PEM Ed25519 public key is 113 bytes; anything far larger is not one, and
// a trust directory must not make verify read a huge file.
constexpr size_t kMaxKeyFileBytes = 16 * 1024;

absl::StatusOr<std::string> ReadKeyFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::NotFoundError(absl::StrCat("cannot read the public key ", path, ": ",
                                            std::strerror(errno),
                                            "; give the .pub file `controller keygen` wrote"));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file; give the .pub file `controller keygen` wrote"));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot read the public key ", path, ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxKeyFileBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, " is over ", kMaxKeyFileBytes,
          " bytes, so it is not an Ed25519 public key; give the .pub file `controller keygen` "
          "wrote"));
    }
  }
  return text;
}

absl::Status RefuseWorldWritable(const std::string& path, const struct stat& st,
                                 const std::string& dir) {
  if ((st.st_mode & S_IWOTH) == 0) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      path,
      " may be written by every user of this host, so anyone could make verify trust their "
      "key; run `chmod o-w ",
      path, "` (and check what is in ", dir, ")"));
}

}  // namespace

TrustedKeys::TrustedKeys(std::string suggested_dir)
    : origin_(Origin::kNone), where_(std::move(suggested_dir)) {}

TrustedKeys::TrustedKeys(Origin origin, std::string where)
    : origin_(origin), where_(std::move(where)) {}

absl::Status TrustedKeys::Add(const std::string& pem, const std::string& source) {
  auto fingerprint = PublicKeyFingerprint(pem);
  if (!fingerprint.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": ", fingerprint.status().message(),
        origin_ == Origin::kDirectory ? " (or move the file out of the trust directory)" : ""));
  }
  if (Find(*fingerprint) == nullptr) keys_.push_back(Key{*fingerprint, pem, source});
  return absl::OkStatus();
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromPublicKeyFile(const std::string& path) {
  auto pem = ReadKeyFile(path);
  if (!pem.ok()) return pem.status();
  TrustedKeys keys(Origin::kPublicKeyFile, path);
  if (auto status = keys.Add(*pem, path); !status.ok()) return status;
  return keys;
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromDirectory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(
        "the trust directory ", dir,
        " does not exist or is not a directory; create it and copy the cluster's public key "
        "(the .pub file `controller keygen` wrote) into it"));
  }
  if (auto status = RefuseWorldWritable(dir, st, dir); !status.ok()) return status;

  std::vector<std::string> paths;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!absl::EndsWith(name, ".pub") || name.front() == '.') continue;
    if (paths.size() == kMaxDirectoryKeys) {
      return absl::InvalidArgumentError(
          absl::StrCat("the trust directory ", dir, " holds more than ", kMaxDirectoryKeys,
                       " .pub files; keep only the keys of the clusters you certify"));
    }
    paths.push_back(it->path().string());
  }
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat("cannot list the trust directory ", dir, ": ",
                                                    error.message(), "; make it readable"));
  }
  std::sort(paths.begin(), paths.end());  // the same directory always reads the same way

  TrustedKeys keys(Origin::kDirectory, dir);
  for (const std::string& path : paths) {
    struct stat file {};
    if (::stat(path.c_str(), &file) != 0) continue;  // a dangling link trusts nothing
    if (auto status = RefuseWorldWritable(path, file, dir); !status.ok()) return status;
    auto pem = ReadKeyFile(path);
    if (!pem.ok()) return pem.status();
    if (auto status = keys.Add(*pem, path); !status.ok()) return status;
  }
  return keys;
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromSigningKey(const std::string& private_key_path) {
  auto pem = PublicKeyOfSigningKey(private_key_path);
  if (!pem.ok()) return pem.status();
  TrustedKeys keys(Origin::kSigningKey, private_key_path);
  if (auto status = keys.Add(*pem, private_key_path); !status.ok()) return status;
  return keys;
}

const TrustedKeys::Key* TrustedKeys::Find(const std::string& fingerprint) const {
  for (const Key& key : keys_) {
    if (key.fingerprint == fingerprint) return &key;
  }
  return nullptr;
}

std::string TrustedKeys::WhyNotTrusted(const std::string& fingerprint) const {
  switch (origin_) {
    case Origin::kPublicKeyFile:
      return absl::StrCat("the certificate was signed by ", fingerprint, ", but --pubkey ", where_,
                          " is ", keys_.front().fingerprint,
                          ": it was signed by another key; ask whoever ran the certification "
                          "for the cluster's public key and pass that with --pubkey");
    case Origin::kDirectory:
      return absl::StrCat("the signer's key ", fingerprint, " is not among the ", keys_.size(),
                          " key(s) in the trust directory ", where_,
                          "; if it is the cluster's key, pass the cluster's public key with "
                          "--pubkey FILE or add it to ",
                          where_);
    case Origin::kSigningKey:
      return absl::StrCat("it was signed by ", fingerprint, ", not by this plan's signing key ",
                          where_, " (", keys_.front().fingerprint, ")");
    case Origin::kNone:
      break;
  }
  return absl::StrCat("nothing says who owns the signer's key ", fingerprint,
                      " (no --pubkey, no --trust-dir, and no ", where_,
                      "); pass the cluster's public key with --pubkey FILE or add it to ", where_);
}

}  // namespace clustercert::controller
