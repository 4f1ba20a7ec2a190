#include "controller/certificate/certificate_reader.h"

#include "absl/strings/str_cat.h"
#include "common/json_strict.h"
#include "common/regular_file.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_format.h"

namespace clustercert::controller {

absl::StatusOr<v1::Certificate> ParseCertificateJson(const std::string& json,
                                                     const std::string& name) {
  // Before protobuf's reader, which keeps the last of two equal keys: a
  // duplicated "verdict" would verify while a first-wins reader sees another.
  if (auto strict = CheckStrictJson(json, name); !strict.ok()) return strict;
  auto parsed = ParseCertificateOfAnyFormat(json);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a clustercert certificate (", parsed.status().message(),
                     "); pass the certificate.json a `controller run` wrote, unedited"));
  }
  v1::Certificate& certificate = *parsed;
  if (certificate.tool() != "clustercert") {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " says tool '", certificate.tool(),
        "', expected 'clustercert'; pass the certificate.json a `controller run` wrote"));
  }
  return parsed;
}

absl::StatusOr<LoadedCertificate> LoadCertificate(const std::string& path) {
  auto bytes = ReadRegularFile(path, kMaxCertificateBytes, "certificate");
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(),
                        absl::StrCat(bytes.status().message(),
                                     "; pass the path of a certificate.json (each run prints it "
                                     "on its last line)"));
  }
  LoadedCertificate loaded;
  loaded.bytes = *std::move(bytes);
  auto certificate = ParseCertificateJson(loaded.bytes, path);
  if (!certificate.ok()) return certificate.status();
  loaded.certificate = *std::move(certificate);
  loaded.sha256 = Sha256Hex(loaded.bytes);
  return loaded;
}

}  // namespace clustercert::controller
