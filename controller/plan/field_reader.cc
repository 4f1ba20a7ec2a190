#include "controller/plan/field_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/host_port.h"
#include "controller/plan/byte_size.h"
#include "controller/plan/closest_key.h"
#include "controller/plan/yaml_scalar.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kUnquoteHint = "Write it without quotes.";

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

}  // namespace

std::string Sentence(absl::string_view clause) {
  std::string sentence(clause);
  if (!sentence.empty()) sentence[0] = absl::ascii_toupper(static_cast<unsigned char>(sentence[0]));
  if (!sentence.empty() && sentence.back() != '.') sentence.push_back('.');
  return sentence;
}

FieldReader::FieldReader(ParseContext context) : context_(context) {}

SourceLocation FieldReader::Locate(const YamlMark& mark) const {
  SourceLocation at;
  at.line = mark.line < 0 ? 1 : mark.line + 1;
  at.column = mark.column < 0 ? 1 : mark.column + 1;
  return at;
}

void FieldReader::Record(const YamlField& field) {
  if (context_.locations != nullptr) (*context_.locations)[field.path] = field.at;
}

void FieldReader::Reject(const YamlField& field, absl::string_view requirement,
                         absl::string_view hint) {
  std::string message = absl::StrCat(field.path, " is ", DescribeValue(field.value),
                                     "; it must be ", requirement, ".");
  if (!hint.empty()) absl::StrAppend(&message, " ", hint);
  Report(field, std::move(message));
}

void FieldReader::Report(const YamlField& field, std::string message) {
  context_.errors->Add(field.at, field.path, std::move(message));
}

void FieldReader::ReportAt(const SourceLocation& at, absl::string_view path, std::string message) {
  context_.errors->Add(at, path, std::move(message));
}

template <typename T, typename Parse>
std::optional<T> FieldReader::PlainScalar(const YamlField& field, absl::string_view requirement,
                                          Parse parse) {
  if (!field.value.IsScalar()) {
    Reject(field, requirement);
    return std::nullopt;
  }
  const std::optional<T> value = parse(field.value.Scalar());
  if (!value.has_value()) {
    Reject(field, requirement);
    return std::nullopt;
  }
  if (!IsPlainScalar(field.value)) {
    Reject(field, requirement, kUnquoteHint);
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> FieldReader::Int(const YamlField& field, int64_t min, int64_t max,
                                        absl::string_view requirement) {
  const std::optional<int64_t> value = PlainScalar<int64_t>(field, requirement, ParseIntText);
  if (!value.has_value()) return std::nullopt;
  if (*value < min || *value > max) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return value;
}

std::optional<int64_t> FieldReader::IntIn(const YamlField& field,
                                          const std::vector<int64_t>& allowed,
                                          absl::string_view requirement) {
  const std::optional<int64_t> value =
      Int(field, *std::min_element(allowed.begin(), allowed.end()),
          *std::max_element(allowed.begin(), allowed.end()), requirement);
  if (!value.has_value()) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *value) == allowed.end()) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return value;
}

std::optional<double> FieldReader::Number(const YamlField& field, const NumberRange& range,
                                          absl::string_view requirement) {
  const std::optional<double> value = PlainScalar<double>(field, requirement, ParseNumberText);
  if (!value.has_value()) return std::nullopt;
  const bool above_min = range.min_inclusive ? *value >= range.min : *value > range.min;
  const bool below_max =
      !range.has_max || (range.max_inclusive ? *value <= range.max : *value < range.max);
  if (!above_min || !below_max) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return value;
}

std::optional<bool> FieldReader::Bool(const YamlField& field) {
  constexpr absl::string_view kRequirement = "true or false";
  if (!field.value.IsScalar()) {
    Reject(field, kRequirement);
    return std::nullopt;
  }
  const std::optional<bool> value = ParseBoolText(field.value.Scalar());
  if (!value.has_value()) {
    Reject(field, kRequirement);
    return std::nullopt;
  }
  if (!IsPlainScalar(field.value)) {
    Reject(field, kRequirement, kUnquoteHint);
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> FieldReader::String(const YamlField& field,
                                               absl::string_view requirement, bool allow_empty) {
  if (!field.value.IsScalar() || (!allow_empty && field.value.Scalar().empty())) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return field.value.Scalar();
}

std::optional<std::string> FieldReader::Name(const YamlField& field,
                                             absl::string_view requirement) {
  std::optional<std::string> text = String(field, requirement);
  if (!text.has_value()) return std::nullopt;
  if (!std::all_of(text->begin(), text->end(), IsNameChar)) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> FieldReader::Enum(const YamlField& field,
                                             const std::vector<std::string>& allowed) {
  const std::string requirement = absl::StrCat("one of ", absl::StrJoin(allowed, ", "));
  std::optional<std::string> text = String(field, requirement);
  if (!text.has_value()) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *text) != allowed.end()) return text;
  const std::string suggestion = ClosestKey(*text, allowed);
  Reject(field, requirement,
         suggestion.empty() ? "" : absl::StrCat("Did you mean ", suggestion, "?"));
  return std::nullopt;
}

std::optional<int64_t> FieldReader::ByteSize(const YamlField& field, int64_t min, int64_t max,
                                             absl::string_view requirement) {
  if (!field.value.IsScalar()) {
    Reject(field, requirement);
    return std::nullopt;
  }
  absl::StatusOr<int64_t> bytes = ParseByteSize(field.value.Scalar());
  if (!bytes.ok()) {
    const std::string spelling = WholeByteSpelling(field.value.Scalar());
    Reject(
        field, requirement,
        spelling.empty() ? "" : absl::StrCat("Fractions are not accepted; write ", spelling, "."));
    return std::nullopt;
  }
  if (*bytes < min || *bytes > max) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return *bytes;
}

std::optional<HostPort> FieldReader::Endpoint(const YamlField& field,
                                              absl::string_view requirement) {
  std::optional<std::string> text = String(field, requirement);
  if (!text.has_value()) return std::nullopt;
  absl::StatusOr<HostPort> endpoint = ParseHostPort(*text);
  if (!endpoint.ok()) {
    Reject(field, requirement, Sentence(endpoint.status().message()));
    return std::nullopt;
  }
  return *endpoint;
}

std::optional<std::string> FieldReader::IpAddress(const YamlField& field,
                                                  absl::string_view requirement) {
  std::optional<std::string> text = String(field, requirement);
  if (!text.has_value()) return std::nullopt;
  if (!IsIpAddress(*text)) {
    Reject(field, requirement);
    return std::nullopt;
  }
  return text;
}

std::optional<std::vector<YamlField>> FieldReader::Items(const YamlField& field,
                                                         absl::string_view requirement) {
  if (!field.value.IsSequence()) {
    Reject(field, requirement);
    return std::nullopt;
  }
  std::vector<YamlField> items;
  items.reserve(field.value.size());
  for (size_t i = 0; i < field.value.size(); ++i) {
    YamlField item{field.value[i], absl::StrCat(field.path, "[", i, "]"), field.at};
    if (item.value.IsDefined() && !item.value.IsNull()) item.at = Locate(item.value.Mark());
    Record(item);
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace clustercert::controller::plan
