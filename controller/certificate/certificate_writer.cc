#include "controller/certificate/certificate_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/time_format.h"
#include "google/protobuf/util/json_util.h"

namespace clustercert::controller {

absl::StatusOr<std::string> CertificateJson(const v1::Certificate& certificate) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(certificate, &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot encode the certificate as JSON: ", std::string(status.message())));
  }
  return json;
}

absl::StatusOr<std::string> CreateRunDirectory(const std::string& out_dir,
                                               const std::string& cluster, absl::Time stamp) {
  namespace fs = std::filesystem;
  const std::string base = absl::StrCat(cluster, "-", FormatUtcStamp(stamp));
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create the output directory ", out_dir,
                                                    ": ", ec.message(),
                                                    "; pass --out with a writable directory"));
  }
  fs::path dir = fs::path(out_dir) / base;
  // create_directory (not _directories) fails on one that exists, so two runs
  // started in the same second never share one.
  for (int n = 2; !fs::create_directory(dir, ec); ++n) {
    if (ec || n > 1000) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", dir.string(), ": ",
                       ec ? ec.message() : std::string("too many runs in this second"),
                       "; pass --out with a writable directory"));
    }
    dir = fs::path(out_dir) / absl::StrCat(base, "-", n);
  }
  return dir.string();
}

absl::StatusOr<std::string> WriteCertificateIn(const v1::Certificate& certificate,
                                               const std::string& dir) {
  namespace fs = std::filesystem;
  auto json = CertificateJson(certificate);
  if (!json.ok()) return json.status();
  std::error_code ec;
  const fs::path path = fs::path(dir) / "certificate.json";
  const fs::path partial = fs::path(dir) / "certificate.json.partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << *json << "\n";
    if (!out.flush()) {
      return absl::UnavailableError(absl::StrCat("cannot write ", partial.string(), ": ",
                                                 std::strerror(errno), "; check free disk space"));
    }
  }
  fs::rename(partial, path, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", partial.string(), " to ",
                                               path.string(), ": ", ec.message()));
  }
  return path.string();
}

absl::StatusOr<std::string> WriteCertificate(const v1::Certificate& certificate,
                                             const std::string& out_dir, absl::Time stamp) {
  auto dir = CreateRunDirectory(out_dir, certificate.cluster(), stamp);
  if (!dir.ok()) return dir.status();
  return WriteCertificateIn(certificate, *dir);
}

}  // namespace clustercert::controller
