#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace clustercert::controller::plan {

// The candidate that `typed` most likely misspells, for "did you mean ...?"
// hints on unknown keys and enum values: the smallest edit distance
// (insertions, deletions, substitutions and swaps of two neighbours, ignoring
// case) within a budget that grows with the word's length. Returns an empty
// string when nothing is close enough to be a plausible typo.
std::string ClosestKey(absl::string_view typed, const std::vector<std::string>& candidates);

// The optimal-string-alignment distance between `a` and `b`, ignoring case.
int TypoDistance(absl::string_view a, absl::string_view b);

}  // namespace clustercert::controller::plan
