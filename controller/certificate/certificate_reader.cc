#include "controller/certificate/certificate_reader.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller {

absl::StatusOr<v1::Certificate> ParseCertificateJson(const std::string& json,
                                                     const std::string& name) {
  v1::Certificate certificate;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(json, &certificate, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a clustercert certificate (", std::string(status.message()),
                     "); pass the certificate.json a `controller run` wrote, unedited"));
  }
  if (certificate.tool() != "clustercert") {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " says tool '", certificate.tool(),
        "', expected 'clustercert'; pass the certificate.json a `controller run` wrote"));
  }
  return certificate;
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
