#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::checks {

// The text of each certificate enum, as the JSON spells it ("pass",
// "warning", "interrupted", "undersized"): for tables, reports and messages.
inline const std::string& StatusText(v1::Finding::Status status) {
  return v1::Finding::Status_Name(status);
}
inline const std::string& StatusText(v1::Finding::Severity severity) {
  return v1::Finding::Severity_Name(severity);
}
inline const std::string& StatusText(v1::PhaseResult::Status status) {
  return v1::PhaseResult::Status_Name(status);
}
inline const std::string& StatusText(v1::UplinkSizing::Verdict verdict) {
  return v1::UplinkSizing::Verdict_Name(verdict);
}

}  // namespace clustercert::controller::checks
