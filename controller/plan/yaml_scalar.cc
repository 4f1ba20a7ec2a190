#include "controller/plan/yaml_scalar.h"

#include <charconv>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::plan {
namespace {

constexpr size_t kMaxShownLength = 60;

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

absl::string_view StripSign(absl::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return text;
}

std::string Quote(absl::string_view text) {
  std::string shown;
  for (char c : text.substr(0, kMaxShownLength)) {
    if (c == '"' || c == '\\') shown.push_back('\\');
    if (c == '\n') {
      shown += "\\n";
      continue;
    }
    shown.push_back(c);
  }
  if (text.size() > kMaxShownLength) shown += "...";
  return absl::StrCat("\"", shown, "\"");
}

}  // namespace

bool IsPlainScalar(const YamlNode& node) { return node.IsPlain(); }

std::optional<int64_t> ParseIntText(absl::string_view text) {
  if (!AllDigits(StripSign(text))) return std::nullopt;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseNumberText(absl::string_view text) {
  // Mantissa digits with at most one dot, then an optional exponent: the
  // check keeps from_chars from accepting "inf", "nan" or hex floats.
  absl::string_view body = StripSign(text);
  const size_t exponent = body.find_first_of("eE");
  absl::string_view mantissa = body.substr(0, exponent);
  const size_t dot = mantissa.find('.');
  std::string digits(mantissa);
  if (dot != absl::string_view::npos) digits.erase(dot, 1);
  if (!AllDigits(digits)) return std::nullopt;
  if (exponent != absl::string_view::npos && !AllDigits(StripSign(body.substr(exponent + 1)))) {
    return std::nullopt;
  }
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<bool> ParseBoolText(absl::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::string DescribeValue(const YamlNode& node) {
  switch (node.Type()) {
    case YamlType::kUndefined:
    case YamlType::kNull:
      return "empty";
    case YamlType::kMap:
      return node.size() == 0 ? "an empty map" : "a map";
    case YamlType::kSequence:
      return node.size() == 0 ? "an empty list" : "a list";
    case YamlType::kScalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (IsPlainScalar(node) && (ParseNumberText(text) || ParseBoolText(text))) return text;
  return Quote(text);
}

}  // namespace clustercert::controller::plan
