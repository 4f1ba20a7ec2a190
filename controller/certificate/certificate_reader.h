#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// A certificate file as read back: the message and the file's bytes (whose
// SHA-256 a re-certification records as its baseline).
struct LoadedCertificate {
  v1::Certificate certificate;
  std::string bytes;
  std::string sha256;  // hex, of `bytes`
};

// Reads certificate.json. Unknown fields are errors (an edit that adds one is
// not silently dropped); the message names the file and what to do.
absl::StatusOr<LoadedCertificate> LoadCertificate(const std::string& path);

// Parses certificate JSON text; `name` is used in error messages.
absl::StatusOr<v1::Certificate> ParseCertificateJson(const std::string& json,
                                                     const std::string& name);

}  // namespace clustercert::controller
