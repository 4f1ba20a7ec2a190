#include "common/tls_files.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/regular_file.h"

namespace clustercert {
namespace {

constexpr size_t kMaxPemBytes = 1 << 20;

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* role) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no ", role, " file given: pass all of the CA, certificate and key files, ",
                     "or run deploy/pki.sh to create them"));
  }
  // A CA bundle is the largest of the three; 1 MiB holds thousands of
  // certificates. Only a regular file is read, so a FIFO or device named by
  // mistake fails at once instead of hanging or filling memory.
  absl::StatusOr<std::string> read = ReadRegularFile(path, kMaxPemBytes, role);
  if (absl::IsNotFound(read.status())) {
    return absl::NotFoundError(
        absl::StrCat(read.status().message(), "; run deploy/pki.sh to create the cluster PKI"));
  }
  if (!read.ok()) return read.status();
  std::string pem = *std::move(read);
  if (pem.find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", role, " file ", path, " is not PEM (no '-----BEGIN' line); give the PEM file ",
        "deploy/pki.sh wrote"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<TlsMaterial> LoadTlsMaterial(const TlsPaths& paths) {
  TlsMaterial material;
  auto ca = ReadPem(paths.ca, "CA certificate");
  if (!ca.ok()) return ca.status();
  auto cert = ReadPem(paths.cert, "certificate");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(paths.key, "private key");
  if (!key.ok()) return key.status();
  material.ca_pem = std::move(*ca);
  material.cert_pem = std::move(*cert);
  material.key_pem = std::move(*key);
  return material;
}

std::shared_ptr<grpc::ServerCredentials> MutualTlsServerCredentials(const TlsMaterial& material) {
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = material.ca_pem;
  options.pem_key_cert_pairs.push_back({material.key_pem, material.cert_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MutualTlsChannelCredentials(const TlsMaterial& material) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = material.ca_pem;
  options.pem_private_key = material.key_pem;
  options.pem_cert_chain = material.cert_pem;
  return grpc::SslCredentials(options);
}

}  // namespace clustercert
