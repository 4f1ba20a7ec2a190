#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/host_port.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_error_list.h"
#include "controller/plan/plan_limits.h"
#include "controller/plan/yaml_document.h"

namespace clustercert::controller::plan {

// What every reader of one plan file shares: where errors go and where the
// positions of the keys that were read are recorded (Plan::locations).
struct ParseContext {
  PlanErrorList* errors = nullptr;
  std::map<std::string, SourceLocation>* locations = nullptr;
  PlanLimits limits;
};

// One value of the plan with its key path ("fabric.link_rate_gbps",
// "pairwise.tests[1]") and position. For an empty value ("key:" with nothing
// after it) the position is the key's, since the parser marks an empty value at
// the next token.
struct YamlField {
  YamlNode value;
  std::string path;
  SourceLocation at;
};

// Bounds of a real-valued key; open bounds say "greater than".
struct NumberRange {
  double min = 0;
  bool min_inclusive = true;
  double max = 0;
  bool max_inclusive = true;
  bool has_max = false;

  static NumberRange Positive() { return {0, false, 0, true, false}; }
  static NumberRange NonNegative() { return {0, true, 0, true, false}; }
  static NumberRange PositiveAtMost(double max) { return {0, false, max, true, true}; }
};

// Converts one YAML value to the type a plan key needs, or reports why it
// cannot as "<path> is <value seen>; it must be <requirement>." Each
// requirement is written by the section parser in the cluster engineer's
// words (units, example, allowed set); this class adds the path, the value
// and the position. Every method returns nullopt after reporting.
class FieldReader {
 public:
  explicit FieldReader(ParseContext context);

  std::optional<int64_t> Int(const YamlField& field, int64_t min, int64_t max,
                             absl::string_view requirement);
  std::optional<int64_t> IntIn(const YamlField& field, const std::vector<int64_t>& allowed,
                               absl::string_view requirement);
  std::optional<double> Number(const YamlField& field, const NumberRange& range,
                               absl::string_view requirement);
  std::optional<bool> Bool(const YamlField& field);
  // Any scalar as its text (numbers become their text); empty text is
  // refused unless `allow_empty`.
  std::optional<std::string> String(const YamlField& field, absl::string_view requirement,
                                    bool allow_empty = false);
  // A name of letters, digits, '.', '_' and '-' (clusters, nodes, devices).
  std::optional<std::string> Name(const YamlField& field, absl::string_view requirement);
  // One of `allowed`, exactly; a near miss gets "did you mean ...?".
  std::optional<std::string> Enum(const YamlField& field, const std::vector<std::string>& allowed);
  // A byte count: an integer or a string such as "8G" (see byte_size.h).
  std::optional<int64_t> ByteSize(const YamlField& field, int64_t min, int64_t max,
                                  absl::string_view requirement);
  // "host:port" (see host_port.h); the reason it is wrong follows the
  // requirement ("The port 70700 is outside 1..65535.").
  std::optional<HostPort> Endpoint(const YamlField& field, absl::string_view requirement);
  // A literal IPv4 or IPv6 address (no name, no port).
  std::optional<std::string> IpAddress(const YamlField& field, absl::string_view requirement);
  // The items of a list, each with path "<path>[i]"; nullopt (reported) when
  // the value is not a list.
  std::optional<std::vector<YamlField>> Items(const YamlField& field,
                                              absl::string_view requirement);

  // Reports "<path> is <value>; it must be <requirement>.", followed by
  // `hint` (a sentence or clause) when given.
  void Reject(const YamlField& field, absl::string_view requirement, absl::string_view hint = "");
  // Reports a sentence of the caller's own at the field.
  void Report(const YamlField& field, std::string message);
  // Reports at a position that is not a value (a missing key, a map).
  void ReportAt(const SourceLocation& at, absl::string_view path, std::string message);

  // The 1-based position of a parser mark in this file.
  SourceLocation Locate(const YamlMark& mark) const;
  void Record(const YamlField& field);

  const ParseContext& context() const { return context_; }

 private:
  // A scalar that `parse` accepts and that is written plain (not quoted);
  // otherwise the field is rejected with `requirement` and nullopt returned.
  template <typename T, typename Parse>
  std::optional<T> PlainScalar(const YamlField& field, absl::string_view requirement, Parse parse);

  ParseContext context_;
};

// "the port is missing" -> "The port is missing."
std::string Sentence(absl::string_view clause);

}  // namespace clustercert::controller::plan
