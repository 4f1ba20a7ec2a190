#include "controller/journal/journal_key.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/errno_text.h"
#include "common/openssl_error.h"
#include "common/random_id.h"
#include "common/regular_file.h"
#include "common/unique_fd.h"
#include "common/write_all.h"
#include "controller/certificate/certificate_signer.h"

namespace clustercert::controller::journal {
namespace {

constexpr size_t kSecretBytes = 32;
// Domain separation: neither HMAC input can be mistaken for the other.
constexpr char kDeriveLabel[] = "clustercert journal key v1\n";
constexpr char kMacLabel[] = "clustercert journal line v1\n";

std::string Hmac(absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out,
           &length) == nullptr) {
    return "";  // matches no MAC: every line is measured again
  }
  return std::string(reinterpret_cast<char*>(out), length);
}

absl::StatusOr<JournalKey> DeriveFromSigningKey(const std::string& signing_key,
                                                const std::string& run_nonce) {
  auto pem = ReadRegularFile(signing_key, kMaxKeyFileBytes, "signing key");
  if (!pem.ok()) {
    return absl::Status(pem.status().code(),
                        absl::StrCat(pem.status().message(),
                                     " (the run journal's lines are authenticated with a key "
                                     "derived from it); fix certificate.signing_key in the plan"));
  }
  struct BioFree {
    void operator()(BIO* bio) const { BIO_free(bio); }
  };
  struct PkeyFree {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  };
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  unsigned char raw[64];
  size_t raw_length = sizeof raw;
  if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519 ||
      EVP_PKEY_get_raw_private_key(key.get(), raw, &raw_length) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(signing_key, " is not an Ed25519 private key in PEM (", OpenSslError(),
                     "); make one with `controller keygen --out PREFIX`"));
  }
  std::string secret = Hmac(absl::string_view(reinterpret_cast<char*>(raw), raw_length),
                            absl::StrCat(kDeriveLabel, run_nonce));
  OPENSSL_cleanse(raw, sizeof raw);
  if (secret.size() != kSecretBytes) {
    return absl::InternalError("cannot derive the run journal's key: HMAC-SHA256 failed");
  }
  return JournalKey(std::move(secret), run_nonce,
                    absl::StrCat("a key derived from the plan's signing key ", signing_key));
}

}  // namespace

absl::StatusOr<std::string> NewRunNonce() { return RandomId(""); }

absl::StatusOr<JournalKey> JournalKey::ForNewRun(const std::string& run_dir,
                                                 const std::string& signing_key,
                                                 const std::string& run_nonce) {
  if (!signing_key.empty()) return DeriveFromSigningKey(signing_key, run_nonce);
  const std::string path = (std::filesystem::path(run_dir) / kJournalKeyFile).string();
  // Two random ids make 32 bytes from getrandom(2).
  auto first = RandomId("");
  auto second = RandomId("");
  if (!first.ok()) return first.status();
  if (!second.ok()) return second.status();
  const std::string secret_hex = *first + *second;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid() || !WriteAll(fd.get(), secret_hex + "\n") || ::fsync(fd.get()) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the run journal's key ", path, ": ", ErrnoText(errno),
                     "; pass --out with a writable directory (a new run never reuses one)"));
  }
  return JournalKey(absl::HexStringToBytes(secret_hex), run_nonce, path);
}

absl::StatusOr<JournalKey> JournalKey::ForResume(const std::string& run_dir,
                                                 const std::string& signing_key,
                                                 const std::string& run_nonce) {
  if (!signing_key.empty()) return DeriveFromSigningKey(signing_key, run_nonce);
  const std::string path = (std::filesystem::path(run_dir) / kJournalKeyFile).string();
  auto fd = OpenRegularFile(path, "run journal key", /*follow_symlinks=*/false);
  if (!fd.ok()) {
    return absl::Status(fd.status().code(),
                        absl::StrCat(fd.status().message(),
                                     ": without it the journal's lines cannot be authenticated; "
                                     "run the plan again without --resume"));
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "the run journal key ", path, " is not private (owner uid ", st.st_uid, ", mode ",
        absl::StrCat(absl::Hex(st.st_mode & 07777)),
        "; it must be ours and 0600): others could have forged the journal's lines with it; "
        "run the plan again without --resume"));
  }
  auto text = ReadOpenFile(fd->get(), path, 2 * kSecretBytes + 1, "run journal key");
  if (!text.ok()) return text.status();
  std::string hex = *text;
  if (!hex.empty() && hex.back() == '\n') hex.pop_back();
  const bool is_hex = hex.size() == 2 * kSecretBytes &&
                      hex.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!is_hex) {
    return absl::InvalidArgumentError(
        absl::StrCat("the run journal key ", path, " is not ", 2 * kSecretBytes,
                     " hex digits: it is not the one its run wrote; run the plan again without "
                     "--resume"));
  }
  return JournalKey(absl::HexStringToBytes(hex), run_nonce, path);
}

std::string JournalKey::Mac(absl::string_view record) const {
  return absl::BytesToHexString(Hmac(secret_, absl::StrCat(kMacLabel, run_nonce_, "\n", record)));
}

bool JournalKey::Matches(absl::string_view record, absl::string_view mac_hex) const {
  const std::string expected = Mac(record);
  return expected.size() == 2 * kSecretBytes && mac_hex.size() == expected.size() &&
         CRYPTO_memcmp(expected.data(), mac_hex.data(), expected.size()) == 0;
}

}  // namespace clustercert::controller::journal
