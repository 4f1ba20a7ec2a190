#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace clustercert {

// A NaN or an infinity where a node-agent reports a measurement.
//
// No honest measurement is NaN or infinite, and comparisons against a floor
// get both wrong: `inf >= floor` passed an uplink that moved nothing
// measurable, and NaN compares false with everything (and with itself, so a
// recomputation never matched the run's record). A verdict fed one is
// `unknown`, with NonFiniteSentence as its reason, and `verify` recomputes it
// the same way.

// "nan", "inf" or "-inf" (any NaN, whatever its sign or payload, is "nan").
std::string NonFiniteText(double value);

// "node3 reported a non-finite avg_gbps (nan): the measurement is invalid;
// rerun".
std::string NonFiniteSentence(absl::string_view node, absl::string_view field, double value);

// The first double or float field anywhere in `message` (submessages and
// repeated fields included, in field order) that is NaN or infinite: its
// name (the field's own name, "avg_gbps") and value. nullopt when all are
// finite.
struct NonFiniteField {
  std::string field;
  double value = 0;
};
std::optional<NonFiniteField> FindNonFinite(const google::protobuf::Message& message);

// Replaces every NaN in `message` with the one quiet NaN (positive, no
// payload) that the JSON mapping reads "NaN" back as. A NaN's sign and
// payload survive the binary encoding but not JSON, so a certificate signed
// over an agent's -nan (x86's 0.0/0.0) failed its own verify.
void CanonicalizeNaNs(google::protobuf::Message& message);

// a == b, or both NaN: how a recomputation compares a recorded value.
bool SameValue(double a, double b);

}  // namespace clustercert
