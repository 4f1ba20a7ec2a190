#include "controller/report/report_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "controller/certificate/result_keys.h"

namespace clustercert::controller::report {

std::string FormatNumber(double value) {
  if (value == 0 || !std::isfinite(value)) return value == 0 ? "0" : absl::StrCat(value);
  if (std::fabs(value) >= 100000) return absl::StrFormat("%.0f", value);
  if (std::fabs(value) < 1e-4) return absl::StrFormat("%.3g", value);
  return absl::StrFormat("%.5g", value);
}

std::string ShortNumber(double value) {
  const double magnitude = std::fabs(value);
  if (value == 0) return "0";
  if (magnitude >= 100) return absl::StrFormat("%.0f", value);
  if (magnitude >= 10) return absl::StrFormat("%.1f", value);
  if (magnitude >= 1) return absl::StrFormat("%.2f", value);
  if (magnitude >= 1e-3) return absl::StrFormat("%.2g", value);
  return absl::StrFormat("%.1e", value);
}

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G", "T", "P"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::fabs(value) >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value)) return absl::StrCat(static_cast<int64_t>(value), kUnits[unit]);
  return absl::StrCat(absl::StrFormat("%.3g", value), kUnits[unit]);
}

std::string FormatDurationMs(int64_t ms) {
  if (ms < 1000) return absl::StrCat(ms, " ms");
  if (ms < 60000) return absl::StrFormat("%.1f s", ms / 1000.0);
  const int64_t s = ms / 1000;
  if (s < 3600) return absl::StrCat(s / 60, " min ", s % 60, " s");
  return absl::StrCat(s / 3600, " h ", (s % 3600) / 60, " min");
}

std::string FormatAge(int64_t seconds) {
  if (seconds < 0) return absl::StrCat(seconds, " s");
  if (seconds < 60) return absl::StrCat(seconds, " s");
  if (seconds < 3600) return absl::StrCat(seconds / 60, " min");
  if (seconds < 86400) return absl::StrCat(seconds / 3600, " h ", (seconds % 3600) / 60, " min");
  return absl::StrCat(seconds / 86400, " d ", (seconds % 86400) / 3600, " h");
}

bool IsCarried(const v1::Carried& carried) {
  return !carried.from_started_at().empty() || !carried.from_sha256().empty() ||
         carried.age_s() != 0;
}

std::string CarriedText(const v1::Carried& carried) {
  if (!IsCarried(carried)) return "";
  std::string text = "carried from the baseline";
  if (!carried.from_started_at().empty()) absl::StrAppend(&text, " of ", carried.from_started_at());
  absl::StrAppend(&text, " (", FormatAge(carried.age_s()), " old)");
  return text;
}

std::string KeyOf(const v1::Finding& finding) {
  return finding.key().empty() ? controller::FindingKey(finding) : finding.key();
}

int64_t MillisBetween(const std::string& from, const std::string& to) {
  absl::Time a, b;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, from, &a, &error)) return -1;
  if (!absl::ParseTime(absl::RFC3339_full, to, &b, &error)) return -1;
  return absl::ToInt64Milliseconds(b - a);
}

int TriageRank(const v1::Finding& finding) {
  int rank = 6;
  if (finding.status() == v1::Finding::fail)
    rank = 0;
  else if (finding.status() == v1::Finding::unknown)
    rank = 2;
  else if (finding.status() == v1::Finding::skipped)
    rank = 4;
  else if (finding.status() == v1::Finding::pass)
    rank = 6;
  return rank + (finding.severity() == v1::Finding::warning ? 1 : 0);
}

}  // namespace clustercert::controller::report
