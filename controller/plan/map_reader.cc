#include "controller/plan/map_reader.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/plan/closest_key.h"

namespace clustercert::controller::plan {

MapReader::MapReader(FieldReader* reader, YamlField map) : reader_(reader), map_(std::move(map)) {
  if (!map_.value.IsMap()) return;
  for (auto it = map_.value.begin(); it != map_.value.end(); ++it) {
    Entry entry;
    const YamlNode key = it->first;
    const YamlNode value = it->second;
    entry.key = key.IsScalar() ? key.Scalar() : "";
    const SourceLocation key_at = reader_->Locate(key.Mark());
    entry.key_field = YamlField{key, PathOf(entry.key), key_at};
    const bool empty = !value.IsDefined() || value.IsNull();
    entry.value =
        YamlField{value, entry.key_field.path, empty ? key_at : reader_->Locate(value.Mark())};
    entries_.push_back(std::move(entry));
  }
}

std::string MapReader::PathOf(absl::string_view key) const {
  if (map_.path.empty()) return std::string(key);
  return absl::StrCat(map_.path, ".", key);
}

std::string MapReader::Describe() const { return map_.path.empty() ? "the top level" : map_.path; }

void MapReader::Declare(absl::string_view key) {
  if (std::find(declared_.begin(), declared_.end(), key) == declared_.end()) {
    declared_.emplace_back(key);
  }
}

std::optional<YamlField> MapReader::Get(absl::string_view key) {
  Declare(key);
  for (const Entry& entry : entries_) {
    if (entry.key == key) {
      reader_->Record(entry.value);
      return entry.value;
    }
  }
  return std::nullopt;
}

std::optional<YamlField> MapReader::Require(absl::string_view key, absl::string_view requirement) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) {
    reader_->ReportAt(map_.at, PathOf(key),
                      absl::StrCat(PathOf(key), " is missing; it must be ", requirement, "."));
  }
  return field;
}

bool MapReader::Has(absl::string_view key) { return Get(key).has_value(); }

std::optional<SourceLocation> MapReader::KeyLocation(absl::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return entry.key_field.at;
  }
  return std::nullopt;
}

bool MapReader::Int(absl::string_view key, int64_t min, int64_t max, absl::string_view requirement,
                    int* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<int64_t> value = reader_->Int(*field, min, max, requirement);
  if (!value.has_value()) return false;
  *out = static_cast<int>(*value);
  return true;
}

bool MapReader::IntIn(absl::string_view key, const std::vector<int64_t>& allowed,
                      absl::string_view requirement, int* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<int64_t> value = reader_->IntIn(*field, allowed, requirement);
  if (!value.has_value()) return false;
  *out = static_cast<int>(*value);
  return true;
}

bool MapReader::Number(absl::string_view key, const NumberRange& range,
                       absl::string_view requirement, double* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<double> value = reader_->Number(*field, range, requirement);
  if (!value.has_value()) return false;
  *out = *value;
  return true;
}

bool MapReader::Duration(absl::string_view key, const NumberRange& range,
                         absl::string_view requirement, absl::Duration unit, absl::Duration* out) {
  double count = 0;
  if (!Number(key, range, requirement, &count)) return false;
  *out = count * unit;
  return true;
}

bool MapReader::Bool(absl::string_view key, bool* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<bool> value = reader_->Bool(*field);
  if (!value.has_value()) return false;
  *out = *value;
  return true;
}

bool MapReader::String(absl::string_view key, absl::string_view requirement, std::string* out,
                       bool allow_empty) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<std::string> value = reader_->String(*field, requirement, allow_empty);
  if (!value.has_value()) return false;
  *out = std::move(*value);
  return true;
}

bool MapReader::Enum(absl::string_view key, const std::vector<std::string>& allowed,
                     std::string* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<std::string> value = reader_->Enum(*field, allowed);
  if (!value.has_value()) return false;
  *out = std::move(*value);
  return true;
}

bool MapReader::ByteSize(absl::string_view key, int64_t min, int64_t max,
                         absl::string_view requirement, int64_t* out) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return false;
  std::optional<int64_t> value = reader_->ByteSize(*field, min, max, requirement);
  if (!value.has_value()) return false;
  *out = *value;
  return true;
}

std::optional<MapReader> MapReader::Map(absl::string_view key, absl::string_view requirement) {
  std::optional<YamlField> field = Get(key);
  if (!field.has_value()) return std::nullopt;
  if (!field->value.IsMap() && !field->value.IsNull()) {
    reader_->Reject(*field, requirement);
    return std::nullopt;
  }
  return MapReader(reader_, *field);
}

void MapReader::Finish() {
  const std::string allowed = absl::StrJoin(declared_, ", ");
  std::unordered_map<std::string_view, size_t> first_with_key;  // linear, however many keys
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& entry = entries_[i];
    if (entry.key.empty()) {
      reader_->ReportAt(entry.key_field.at, map_.path,
                        absl::StrCat(Describe(),
                                     " has a key that is not a plain word; the "
                                     "keys allowed are: ",
                                     allowed, "."));
      continue;
    }
    if (std::find(declared_.begin(), declared_.end(), entry.key) == declared_.end()) {
      const std::string suggestion = ClosestKey(entry.key, declared_);
      std::string message = absl::StrCat(entry.key_field.path, " is not a known key");
      absl::StrAppend(&message,
                      suggestion.empty() ? "." : absl::StrCat("; did you mean ", suggestion, "?"));
      absl::StrAppend(&message, " Keys allowed ", map_.path.empty() ? "at " : "in ", Describe(),
                      ": ", allowed, ".");
      reader_->ReportAt(entry.key_field.at, entry.key_field.path, std::move(message));
      continue;
    }
    const auto [first, inserted] = first_with_key.try_emplace(entry.key, i);
    if (!inserted) {
      reader_->ReportAt(entry.key_field.at, entry.key_field.path,
                        absl::StrCat(entry.key_field.path, " is given twice (first on line ",
                                     entries_[first->second].key_field.at.line,
                                     "); a key may appear only once in a map."));
    }
  }
}

}  // namespace clustercert::controller::plan
