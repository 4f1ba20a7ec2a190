#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::testing {

// The certificate a `controller run` wrote, found by the "certificate: PATH"
// line in `out`, its stdout. Adds a test failure (and returns an empty
// certificate) when the line is missing or the file does not parse.
v1::Certificate CertificateFromOutput(const std::string& out);

// The PATH of that "certificate: PATH" line; empty when there is none.
std::string CertificatePathFromOutput(const std::string& out);

}  // namespace clustercert::testing
