#include "controller/certificate/certificate_reader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "controller/certificate/certificate_format.h"

namespace clustercert::controller {

absl::StatusOr<v1::Certificate> ParseCertificateJson(const std::string& json,
                                                     const std::string& name) {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read ", path,
                     ": no such file or not readable; pass the path of a "
                     "certificate.json (each run prints it on its last line)"));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  LoadedCertificate loaded;
  loaded.bytes = buffer.str();
  auto certificate = ParseCertificateJson(loaded.bytes, path);
  if (!certificate.ok()) return certificate.status();
  loaded.certificate = *std::move(certificate);
  loaded.sha256 = Sha256Hex(loaded.bytes);
  return loaded;
}

}  // namespace clustercert::controller
