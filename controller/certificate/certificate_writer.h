#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// The certificate as JSON: proto field names, every scalar printed, stable
// field order (so a later signature and diff see the same bytes).
absl::StatusOr<std::string> CertificateJson(const v1::Certificate& certificate);
// The same, written to `out` as it is printed (a 1,024-node certificate is
// tens of MB: it is never held whole).
absl::Status WriteCertificateJson(const v1::Certificate& certificate, std::ostream& out);

// Makes the run's own directory, OUT/<cluster>-<UTC stamp> (-2, -3, ... when
// taken), and returns its path. Each run gets its own: a re-certification
// never overwrites the certificate it will be compared with. `run` makes it
// as it starts, so that its journal has a home from the first result on.
absl::StatusOr<std::string> CreateRunDirectory(const std::string& out_dir,
                                               const std::string& cluster, absl::Time stamp);

// Writes DIR/certificate.json (through a .partial file and a rename, so a
// reader never sees half of one) and returns its path. A resumed run writes
// into the directory of the run it continues, replacing the partial
// certificate an interrupted run left there.
absl::StatusOr<std::string> WriteCertificateIn(const v1::Certificate& certificate,
                                               const std::string& dir);

// CreateRunDirectory, then WriteCertificateIn.
absl::StatusOr<std::string> WriteCertificate(const v1::Certificate& certificate,
                                             const std::string& out_dir, absl::Time stamp);

}  // namespace clustercert::controller
