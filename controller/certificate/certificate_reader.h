#pragma once

#include <cstddef>
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

// The largest certificate read: a 1,000-node matrix with its counters is
// tens of MiB; the cap keeps /dev/zero or a runaway file from exhausting
// memory.
inline constexpr size_t kMaxCertificateBytes = size_t{256} << 20;

// Reads certificate.json: a regular file (a FIFO or device is refused, never
// waited on) of at most kMaxCertificateBytes. Unknown fields are errors (an
// edit that adds one is not silently dropped), and so are a key given twice
// in one object and invalid UTF-8 (CheckStrictJson); the message names the
// file and what to do.
absl::StatusOr<LoadedCertificate> LoadCertificate(const std::string& path);

// Parses certificate JSON text, strictly as LoadCertificate does; `name` is
// used in error messages.
absl::StatusOr<v1::Certificate> ParseCertificateJson(const std::string& json,
                                                     const std::string& name);

}  // namespace clustercert::controller
