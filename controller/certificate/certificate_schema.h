#pragma once

#include <string>

namespace clustercert::controller {

// The JSON Schema (draft 2020-12) of certificate.json, generated from the
// descriptor of v1::Certificate so that it cannot drift from the proto: one
// $defs entry per message reached, the proto3 JSON mapping's types (64-bit
// integers as strings, NaN/Infinity as strings), no unknown properties (the
// reader rejects them). Deterministic and pretty-printed (2-space indent,
// trailing newline); docs/certificate.schema.json is this text, committed.
std::string CertificateJsonSchema();

}  // namespace clustercert::controller
