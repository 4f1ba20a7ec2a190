#include "controller/plan/node_pattern.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller::plan {
namespace {

bool LiteralCharacterAllowed(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == ':' || c == '-' ||
         c == '_' || c == '[' || c == ']';
}

// The fact a placeholder stands for; nullptr for an unknown one.
const std::string* FactFor(absl::string_view placeholder, const NodeFacts& facts) {
  if (placeholder == "name") return &facts.name;
  if (placeholder == "addr") return &facts.addr;
  if (placeholder == "hostname") return &facts.hostname;
  if (placeholder == "n") return &facts.number;
  return nullptr;
}

}  // namespace

std::string TrailingNumber(absl::string_view name) {
  size_t start = name.size();
  while (start > 0 && absl::ascii_isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  absl::string_view digits = name.substr(start);
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  return std::string(digits);
}

absl::StatusOr<std::string> ExpandNodePattern(absl::string_view pattern, const NodeFacts& facts) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '{') {
      if (!LiteralCharacterAllowed(c)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the character '", absl::CHexEscape(absl::string_view(&c, 1)),
                         "' is not allowed outside a placeholder (letters, digits, . : - _ [ ])"));
      }
      out.push_back(c);
      continue;
    }
    const size_t close = pattern.find('}', i);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError("a '{' is not closed; placeholders are written {name}");
    }
    const absl::string_view placeholder = pattern.substr(i + 1, close - i - 1);
    const std::string* fact = FactFor(placeholder, facts);
    if (fact == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "{", placeholder, "} is not a placeholder; use {name}, {addr}, {hostname} or {n}"));
    }
    if (fact->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("{", placeholder, "} is empty for node ", facts.name,
                       placeholder == "n" ? " (its name does not end in digits)" : ""));
    }
    out += *fact;
    i = close;
  }
  return out;
}

}  // namespace clustercert::controller::plan
