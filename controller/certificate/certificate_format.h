#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "clustercert/v1/certificate.pb.h"
#include "google/protobuf/message.h"

namespace clustercert::controller {

// The format in which Finding.status/severity, PhaseResult.status and
// UplinkSizing.verdict became proto enums. Their value names are the strings
// earlier formats wrote, so the JSON reads the same; the binary encoding,
// which signatures cover, does not.
inline constexpr uint32_t kFirstEnumFormat = 5;

// Parses certificate JSON of any format into the current message: a format-4
// certificate whose strings are all enum names parses directly; one that
// left a status empty is read through the format-4 schema first. Unknown
// fields are errors. The status message is protobuf's.
absl::StatusOr<v1::Certificate> ParseCertificateOfAnyFormat(const std::string& json);

// The deterministic encoding of `part` (the certificate or one of its
// messages) as a certificate of `format_version` encoded it when it was
// signed: the current schema from format 5 on, the format-4 schema (the
// enum fields as strings) before.
std::string EncodingForFormat(const google::protobuf::Message& part, uint32_t format_version);

}  // namespace clustercert::controller
