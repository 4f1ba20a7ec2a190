#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// The certificate as JSON: proto field names, every scalar printed, stable
// field order (so a later signature and diff see the same bytes).
absl::StatusOr<std::string> CertificateJson(const v1::Certificate& certificate);

// Writes OUT/<cluster>-<UTC stamp>/certificate.json and returns its path.
// Each run gets its own directory: a re-certification never overwrites the
// certificate it will be compared with.
absl::StatusOr<std::string> WriteCertificate(const v1::Certificate& certificate,
                                             const std::string& out_dir, absl::Time stamp);

}  // namespace clustercert::controller
