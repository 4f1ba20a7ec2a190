#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "controller/plan/field_reader.h"

namespace clustercert::controller::plan {

// Reads one YAML map of the plan (the top level, a section, a node, a
// target). Every Get/Require/typed call declares its key as allowed, so the
// keys a map accepts are exactly the ones its section parser asks for;
// Finish() then reports every other key, with a "did you mean" for a likely
// typo and the list of allowed keys, and every key written twice. Typed
// calls leave *out untouched (the plan.h default) when the key is absent or
// its value is wrong, and return true only when they stored a value.
class MapReader {
 public:
  // `map` must hold a map, or be empty ("section:" with nothing after it),
  // which reads as an empty map.
  MapReader(FieldReader* reader, YamlField map);

  MapReader(const MapReader&) = default;
  MapReader& operator=(const MapReader&) = default;

  // The value of `key` when present. Declares `key`.
  std::optional<YamlField> Get(absl::string_view key);
  // As Get; when absent, reports "<path> is missing; it must be <requirement>."
  std::optional<YamlField> Require(absl::string_view key, absl::string_view requirement);
  bool Has(absl::string_view key);
  // Where `key` itself (not its value) is written; nullopt when absent.
  std::optional<SourceLocation> KeyLocation(absl::string_view key) const;

  bool Int(absl::string_view key, int64_t min, int64_t max, absl::string_view requirement,
           int* out);
  bool IntIn(absl::string_view key, const std::vector<int64_t>& allowed,
             absl::string_view requirement, int* out);
  bool Number(absl::string_view key, const NumberRange& range, absl::string_view requirement,
              double* out);
  // A number of `unit`s (the key says which: *_s seconds, *_ms
  // milliseconds), checked against `range` in that unit and kept as a
  // Duration, so no caller converts it again.
  bool Duration(absl::string_view key, const NumberRange& range, absl::string_view requirement,
                absl::Duration unit, absl::Duration* out);
  bool Bool(absl::string_view key, bool* out);
  bool String(absl::string_view key, absl::string_view requirement, std::string* out,
              bool allow_empty = false);
  bool Enum(absl::string_view key, const std::vector<std::string>& allowed, std::string* out);
  bool ByteSize(absl::string_view key, int64_t min, int64_t max, absl::string_view requirement,
                int64_t* out);

  // A nested map; nullopt (reported) when the value is not a map. An empty
  // value reads as an empty map.
  std::optional<MapReader> Map(absl::string_view key, absl::string_view requirement);

  // Reports the keys nobody asked for and the keys given twice. Call once,
  // after every Get.
  void Finish();

  // "fabric.type" for key "type" of the map at "fabric".
  std::string PathOf(absl::string_view key) const;
  const YamlField& field() const { return map_; }
  FieldReader* reader() const { return reader_; }

 private:
  struct Entry {
    std::string key;  // empty when the key is not a scalar
    YamlField key_field;
    YamlField value;
  };

  void Declare(absl::string_view key);
  // "fabric", or "the top level" for the file's root map.
  std::string Describe() const;

  FieldReader* reader_;
  YamlField map_;
  std::vector<Entry> entries_;
  std::vector<std::string> declared_;
};

}  // namespace clustercert::controller::plan
