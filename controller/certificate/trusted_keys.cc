#include "controller/certificate/trusted_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/regular_file.h"
#include "common/unique_fd.h"
#include "controller/certificate/certificate_signer.h"

namespace clustercert::controller {
namespace {

// The directory as an open descriptor, so the checks and the reads below are
// of one directory even if the path is renamed meanwhile. A symlink to the
// directory is followed (/etc/clustercert/trusted-keys may be one); what is
// checked is the directory it leads to.
absl::StatusOr<UniqueFd> OpenTrustDirectory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat("cannot open the trust directory ", dir, ": ",
                                                      ErrnoText(err), "; make it readable"));
    }
    return absl::NotFoundError(absl::StrCat(
        "the trust directory ", dir, " does not exist or is not a directory (", ErrnoText(err),
        "); create it and copy the cluster's public key (the .pub file `controller keygen` "
        "wrote) into it"));
  }
  return fd;
}

// The names of the *.pub files in the open directory, sorted so the same
// directory always reads the same way.
absl::StatusOr<std::vector<std::string>> PubFileNames(int dir_fd, const std::string& dir) {
  auto names = ListOpenDirectory(
      dir_fd, dir, "trust directory",
      [](absl::string_view name) { return absl::EndsWith(name, ".pub") && name.front() != '.'; },
      TrustedKeys::kMaxDirectoryKeys);
  if (absl::IsResourceExhausted(names.status())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the trust directory ", dir, " holds more than ", TrustedKeys::kMaxDirectoryKeys,
        " .pub files; keep only the keys of the clusters you certify"));
  }
  if (names.ok()) std::sort(names->begin(), names->end());
  return names;
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
  // The operator names this file on the command line, so its owner is not
  // checked; it must still be a regular file of a key's size.
  auto pem = ReadRegularFile(path, kMaxKeyFileBytes, "public key");
  if (absl::IsNotFound(pem.status())) {
    return absl::NotFoundError(
        absl::StrCat(pem.status().message(), "; give the .pub file `controller keygen` wrote"));
  }
  if (!pem.ok()) return pem.status();
  TrustedKeys keys(Origin::kPublicKeyFile, path);
  if (auto status = keys.Add(*pem, path); !status.ok()) return status;
  return keys;
}

absl::StatusOr<TrustedKeys> TrustedKeys::FromDirectory(const std::string& dir) {
  auto dir_fd = OpenTrustDirectory(dir);
  if (!dir_fd.ok()) return dir_fd.status();
  struct stat st {};
  if (::fstat(dir_fd->get(), &st) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot stat the trust directory ", dir, ": ", ErrnoText(errno)));
  }
  // Whoever may write the directory or a key in it decides what verify
  // trusts: only root and the user running the controller may.
  if (auto status = CheckTrustedOwnership(st, dir, "trust directory"); !status.ok()) {
    return status;
  }
  auto names = PubFileNames(dir_fd->get(), dir);
  if (!names.ok()) return names.status();

  TrustedKeys keys(Origin::kDirectory, dir);
  for (const std::string& name : *names) {
    const std::string path = absl::StrCat(dir, "/", name);
    // A symlink to a key is followed; its target is what must be owned
    // right, and a dangling link trusts nothing.
    auto fd = OpenRegularFileAt(dir_fd->get(), name, path, "trusted key", /*follow_symlinks=*/true);
    if (!fd.ok()) {
      if (absl::IsNotFound(fd.status())) continue;
      return absl::Status(fd.status().code(),
                          absl::StrCat(fd.status().message(), " (or move it out of the trust ",
                                       "directory ", dir, ")"));
    }
    struct stat file {};
    if (::fstat(fd->get(), &file) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot stat the trusted key ", path, ": ", ErrnoText(errno)));
    }
    if (auto status = CheckTrustedOwnership(file, path, "trusted key"); !status.ok()) {
      return status;
    }
    auto pem = ReadOpenFile(fd->get(), path, kMaxKeyFileBytes, "trusted key");
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
