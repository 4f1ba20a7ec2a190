#include "controller/certificate/certificate_signer.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/openssl_error.h"
#include "common/regular_file.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_format.h"
#include "controller/certificate/result_keys.h"
#include "controller/collectives/collective_verdicts.h"

namespace clustercert::controller {
namespace {

constexpr char kAlgorithm[] = "ed25519";
// SHA-256 of no bytes: the digest of a part whose field is not set.
constexpr char kEmptyPartSha256[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bio = std::unique_ptr<BIO, BioFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(length));
}

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Unbase64(const std::string& text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * text.size() / 4 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  size_t length = static_cast<size_t>(n);
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --length;
  out.resize(length);
  return out;
}

absl::StatusOr<Pkey> PublicKeyFromPem(const std::string& pem, const std::string& what) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Pkey key(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a PEM public key (", OpenSslError(),
                     "); use the .pub file `controller keygen` wrote"));
  }
  if (EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is not an Ed25519 key; make one with `controller keygen --out PREFIX`"));
  }
  return key;
}

absl::StatusOr<std::string> FingerprintOf(EVP_PKEY* key) {
  unsigned char raw[64];
  size_t length = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &length) != 1) {
    return absl::InternalError(absl::StrCat("cannot read the raw public key: ", OpenSslError()));
  }
  return absl::StrCat("SHA256:",
                      Sha256Hex(absl::string_view(reinterpret_cast<const char*>(raw), length)));
}

absl::Status WriteNewFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat(
          path,
          " already exists; keygen never overwrites a key: choose another --out prefix "
          "or remove the old key first"));
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot create ", path, ": ", std::strerror(errno), "; choose a writable --out prefix"));
  }
  ::fchmod(fd, mode);  // the umask must not widen or narrow what we promise
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", why));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// A key file is read only when it is a regular file and at most
// kMaxKeyFileBytes: a FIFO named as the key would block `run` or `verify`
// forever, and /dev/zero would be read until memory ran out.
absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  return ReadRegularFile(path, kMaxKeyFileBytes, what);
}

// The certificate as it is signed: everything but the signature value.
std::string SignedBytes(const v1::Certificate& certificate) {
  v1::Certificate copy = certificate;
  copy.mutable_signature()->clear_value();
  return EncodingForFormat(copy, certificate.format_version());
}

}  // namespace

std::vector<v1::SectionDigest> SectionDigests(const v1::Certificate& certificate) {
  using google::protobuf::FieldDescriptor;
  std::vector<v1::SectionDigest> digests;
  auto add = [&](const std::string& name, const std::string& bytes) {
    v1::SectionDigest digest;
    digest.set_section(name);
    digest.set_sha256(Sha256Hex(bytes));
    digests.push_back(std::move(digest));
  };
  const auto* descriptor = v1::Certificate::descriptor();
  const auto* reflection = v1::Certificate::GetReflection();
  // Each part as its format encoded it when it was signed.
  auto encoded = [&](const google::protobuf::Message& part) {
    return EncodingForFormat(part, certificate.format_version());
  };

  // The scalars (tool, cluster, verdict, times, ...) as one "header" part.
  v1::Certificate header = certificate;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (field->is_repeated() || field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ||
        field->name() == "plan_yaml") {
      reflection->ClearField(&header, field);
    }
  }
  add("header", encoded(header));
  add("plan_yaml", certificate.plan_yaml());
  for (const auto& node : certificate.nodes()) {
    add(absl::StrCat("nodes[", node.name(), "]"), encoded(node));
  }
  for (int i = 0; i < certificate.pairs_size(); ++i) {
    add(absl::StrCat("pairs[", PairKey(certificate.pairs(i)), "]"), encoded(certificate.pairs(i)));
  }
  for (const auto& sweep : certificate.collectives()) {
    // Since format 4 each node has its own 1-node sweep: name it by node.
    // Older certificates keep the part names they were signed with.
    const std::string name = certificate.format_version() >= 4 ? SweepName(sweep) : sweep.scope();
    add(absl::StrCat("collectives[", name, "]"), encoded(sweep));
  }
  // The remaining lists and messages, one part each.
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const std::string& name = field->name();
    if (name == "nodes" || name == "pairs" || name == "collectives" || name == "signature")
      continue;
    if (!field->is_repeated() && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    v1::Certificate part = certificate;
    for (int k = 0; k < descriptor->field_count(); ++k) {
      if (k != i) reflection->ClearField(&part, descriptor->field(k));
    }
    add(name, encoded(part));
  }
  return digests;
}

absl::Status GenerateSigningKey(const std::string& prefix) {
  if (prefix.empty()) {
    return absl::InvalidArgumentError(
        "keygen needs --out PREFIX: the private key goes to PREFIX, the public key to PREFIX.pub");
  }
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key)
    return absl::InternalError(absl::StrCat("cannot make an Ed25519 key: ", OpenSslError()));
  Bio private_pem(BIO_new(BIO_s_mem()));
  Bio public_pem(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(private_pem.get(), key.get(), nullptr, nullptr, 0, nullptr,
                               nullptr) != 1 ||
      PEM_write_bio_PUBKEY(public_pem.get(), key.get()) != 1) {
    return absl::InternalError(absl::StrCat("cannot encode the key as PEM: ", OpenSslError()));
  }
  const std::string public_path = prefix + ".pub";
  if (::access(public_path.c_str(), F_OK) == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat(public_path,
                     " already exists; keygen never overwrites a key: choose another --out "
                     "prefix or remove the old key first"));
  }
  if (auto status = WriteNewFile(prefix, BioText(private_pem.get()), 0600); !status.ok()) {
    return status;
  }
  if (auto status = WriteNewFile(public_path, BioText(public_pem.get()), 0644); !status.ok()) {
    ::unlink(prefix.c_str());  // half a key pair is no use to anyone
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> PublicKeyFingerprint(const std::string& public_key_pem) {
  auto key = PublicKeyFromPem(public_key_pem, "the public key");
  if (!key.ok()) return key.status();
  return FingerprintOf(key->get());
}

absl::StatusOr<std::string> ReadPublicKeyFile(const std::string& path) {
  auto text = ReadFile(path, "public key");
  if (!text.ok()) return text.status();
  if (auto key = PublicKeyFromPem(*text, path); !key.ok()) return key.status();
  return text;
}

namespace {

absl::StatusOr<Pkey> LoadSigningKey(const std::string& private_key_path) {
  auto pem = ReadFile(private_key_path, "signing key");
  if (!pem.ok()) {
    return absl::Status(
        pem.status().code(),
        absl::StrCat(pem.status().message(), "; make one with `controller keygen --out ",
                     private_key_path, "` or fix certificate.signing_key in the plan"));
  }
  Bio bio(BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size())));
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_ED25519) {
    return absl::InvalidArgumentError(
        absl::StrCat(private_key_path, " is not an Ed25519 private key in PEM (", OpenSslError(),
                     "); make one with `controller keygen --out PREFIX`"));
  }
  return key;
}

absl::StatusOr<std::string> PublicPem(EVP_PKEY* key) {
  Bio public_pem(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PUBKEY(public_pem.get(), key) != 1) {
    return absl::InternalError(absl::StrCat("cannot encode the public key: ", OpenSslError()));
  }
  return BioText(public_pem.get());
}

}  // namespace

absl::StatusOr<std::string> PublicKeyOfSigningKey(const std::string& private_key_path) {
  auto key = LoadSigningKey(private_key_path);
  if (!key.ok()) return key.status();
  return PublicPem(key->get());
}

absl::Status SignCertificate(v1::Certificate& certificate, const std::string& private_key_path) {
  auto key = LoadSigningKey(private_key_path);
  if (!key.ok()) return key.status();
  auto public_pem = PublicPem(key->get());
  if (!public_pem.ok()) return public_pem.status();
  auto fingerprint = FingerprintOf(key->get());
  if (!fingerprint.ok()) return fingerprint.status();

  v1::Signature* signature = certificate.mutable_signature();
  signature->Clear();
  signature->set_algorithm(kAlgorithm);
  signature->set_public_key_fingerprint(*fingerprint);
  signature->set_public_key_pem(*public_pem);
  for (auto& digest : SectionDigests(certificate)) *signature->add_sections() = std::move(digest);

  const std::string bytes = SignedBytes(certificate);
  MdCtx ctx(EVP_MD_CTX_new());
  unsigned char raw[64];
  size_t length = sizeof raw;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key->get()) != 1 ||
      EVP_DigestSign(ctx.get(), raw, &length, reinterpret_cast<const unsigned char*>(bytes.data()),
                     bytes.size()) != 1) {
    return absl::InternalError(absl::StrCat("cannot sign the certificate: ", OpenSslError()));
  }
  signature->set_value(Base64(std::string(reinterpret_cast<char*>(raw), length)));
  return absl::OkStatus();
}

namespace {

// Which parts changed since signing, by their recorded digests.
void ComparePartDigests(const v1::Certificate& certificate, std::vector<std::string>& problems) {
  std::map<std::string, std::string> recorded;
  for (const auto& digest : certificate.signature().sections()) {
    recorded[digest.section()] = digest.sha256();
  }
  std::map<std::string, std::string> now;
  for (const auto& digest : SectionDigests(certificate)) now[digest.section()] = digest.sha256();
  for (const auto& [section, sha] : now) {
    auto it = recorded.find(section);
    if (it == recorded.end()) {
      // A field newer than the certificate (interrupted, uplink) is an empty
      // part: it was not added, and the signed bytes do not include it.
      if (sha == kEmptyPartSha256) continue;
      problems.push_back(absl::StrCat(section, " was added after signing"));
    } else if (it->second != sha) {
      problems.push_back(absl::StrCat(section, " was edited after signing"));
    }
  }
  for (const auto& [section, sha] : recorded) {
    if (!now.count(section))
      problems.push_back(absl::StrCat(section, " was removed after signing"));
  }
}

// Whether the signature value is `verifier`'s Ed25519 signature of the
// certificate's signed bytes.
bool SignatureMatches(const v1::Certificate& certificate, const Pkey& verifier) {
  auto raw = Unbase64(certificate.signature().value());
  const std::string bytes = SignedBytes(certificate);
  MdCtx ctx(EVP_MD_CTX_new());
  const bool verified =
      raw && ctx &&
      EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, verifier.get()) == 1 &&
      EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(raw->data()), raw->size(),
                       reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()) == 1;
  ERR_clear_error();
  return verified;
}

}  // namespace

SignatureCheck CheckSignature(const v1::Certificate& certificate, const TrustedKeys& trusted) {
  SignatureCheck check;
  const v1::Signature& signature = certificate.signature();
  check.is_signed = certificate.has_signature() && !signature.value().empty();
  check.fingerprint = signature.public_key_fingerprint();
  if (!check.is_signed) {
    check.problems.push_back(
        "the certificate is not signed: name a key in the plan's certificate.signing_key "
        "(make one with `controller keygen --out PREFIX`) and run again");
    return check;
  }
  if (signature.algorithm() != kAlgorithm) {
    check.problems.push_back(
        absl::StrCat("signature algorithm is '", signature.algorithm(), "', expected 'ed25519'"));
    return check;
  }

  ComparePartDigests(certificate, check.problems);

  // The signer is the embedded key; it must be the key the certificate says
  // signed it, and the signature is checked with the trusted copy of that key
  // when the caller has one.
  auto embedded = PublicKeyFromPem(signature.public_key_pem(), "the embedded public key");
  if (!embedded.ok()) {
    check.problems.push_back(std::string(embedded.status().message()));
    return check;
  }
  auto fingerprint = FingerprintOf(embedded->get());
  if (!fingerprint.ok()) {
    check.problems.push_back(std::string(fingerprint.status().message()));
    return check;
  }
  if (*fingerprint != signature.public_key_fingerprint()) {
    check.problems.push_back(absl::StrCat("the certificate says it was signed by ",
                                          signature.public_key_fingerprint(),
                                          ", but its embedded public key is ", *fingerprint));
  }
  check.fingerprint = *fingerprint;
  const TrustedKeys::Key* trusted_key = trusted.Find(*fingerprint);
  Pkey verifier = *std::move(embedded);
  if (trusted_key != nullptr) {
    auto key = PublicKeyFromPem(trusted_key->pem, trusted_key->source);
    if (!key.ok()) {
      check.problems.push_back(std::string(key.status().message()));
      return check;
    }
    verifier = *std::move(key);
  }

  if (!SignatureMatches(certificate, verifier)) {
    check.problems.push_back(
        check.problems.empty()
            ? "the signature does not match the certificate's content (the signature value or "
              "its key was changed)"
            : "the signature does not match the certificate's content");
  }
  check.intact = check.problems.empty();
  check.trusted = trusted_key != nullptr;
  if (check.trusted) {
    check.trusted_by = trusted_key->source;
  } else {
    check.untrusted = trusted.WhyNotTrusted(*fingerprint);
  }
  check.valid = check.intact && check.trusted;
  return check;
}

}  // namespace clustercert::controller
