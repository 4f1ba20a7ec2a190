#include "controller/certificate/result_keys.h"

#include "absl/strings/str_cat.h"

namespace clustercert::controller {

std::string FindingKey(const v1::Finding& finding) {
  std::string key = finding.id();
  if (finding.node().empty() && finding.device().empty()) return key;
  absl::StrAppend(&key, "@", finding.node());
  if (!finding.device().empty()) {
    absl::StrAppend(&key, finding.node().empty() ? "" : "/", finding.device());
  }
  if (finding.port() != 0) absl::StrAppend(&key, ":", finding.port());
  return key;
}

std::string PairKey(const v1::PairResult& pair) {
  std::string key = absl::StrCat(pair.client(), "->", pair.server());
  if (!pair.rail().empty()) absl::StrAppend(&key, " ", pair.rail());
  absl::StrAppend(&key, " ", pair.test(), " ", pair.memory());
  if (!pair.retest_of().empty()) absl::StrAppend(&key, " retest of ", pair.retest_of());
  return key;
}

std::string PairVerdictKey(const v1::PairResult& pair) {
  std::string key = absl::StrCat(pair.verdict().id(), "@", pair.client());
  if (!pair.rail().empty()) absl::StrAppend(&key, "/", pair.rail());
  absl::StrAppend(&key, "->", pair.server(), " ", pair.test(), " ", pair.memory());
  if (!pair.retest_of().empty()) absl::StrAppend(&key, " retest of ", pair.retest_of());
  return key;
}

}  // namespace clustercert::controller
