#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "controller/plan/yaml_document.h"

namespace clustercert::controller::plan {

// Plain-text views of YAML scalars, with the plan's typing rules: numbers and
// booleans must be written plain (unquoted); "200" in quotes is a string.

// True for a scalar written without quotes or an explicit tag.
bool IsPlainScalar(const YamlNode& node);

// A decimal integer, optionally signed ("-3", "+7"); nullopt for anything
// else, including "4.0", "0x10" and values beyond int64.
std::optional<int64_t> ParseIntText(absl::string_view text);

// A finite decimal number ("0.8", "200", "-1e3", ".5"); nullopt for anything
// else, including YAML's .inf and .nan.
std::optional<double> ParseNumberText(absl::string_view text);

// true/false in YAML's three spellings (true, True, TRUE).
std::optional<bool> ParseBoolText(absl::string_view text);

// The value as an error sentence shows it: a plain number as written (-200),
// any other scalar in double quotes ("fast"), "empty" for a missing value,
// "a map", "an empty map", "a list" or "an empty list"; long text is cut.
std::string DescribeValue(const YamlNode& node);

}  // namespace clustercert::controller::plan
