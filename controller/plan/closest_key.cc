#include "controller/plan/closest_key.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace clustercert::controller::plan {
namespace {

// Edits a typo may plausibly contain: one in a short word, two in a word of
// up to 12 letters (link_rate_gpbs), three beyond.
int TypoBudget(size_t length) {
  if (length <= 4) return 1;
  if (length <= 12) return 2;
  return 3;
}

}  // namespace

int TypoDistance(absl::string_view a_in, absl::string_view b_in) {
  const std::string a = absl::AsciiStrToLower(a_in);
  const std::string b = absl::AsciiStrToLower(b_in);
  const size_t n = a.size();
  const size_t m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string ClosestKey(absl::string_view typed, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = TypoBudget(typed.size()) + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: skipping those
    // keeps a megabyte-long key from costing a megabyte-sized table.
    const size_t gap = typed.size() > candidate.size() ? typed.size() - candidate.size()
                                                       : candidate.size() - typed.size();
    if (gap >= static_cast<size_t>(best_distance)) continue;
    const int distance = TypoDistance(typed, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace clustercert::controller::plan
