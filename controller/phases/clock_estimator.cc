#include "controller/phases/clock_estimator.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace clustercert::controller {

absl::StatusOr<ClockEstimate> EstimateClock(const std::vector<TimeExchange>& exchanges) {
  if (exchanges.empty()) {
    return absl::InvalidArgumentError("no clock exchange completed, so there is no offset");
  }
  ClockEstimate best;
  bool have = false;
  for (size_t i = 0; i < exchanges.size(); ++i) {
    const TimeExchange& x = exchanges[i];
    if (x.t4 < x.t1) {
      return absl::InvalidArgumentError(
          absl::StrCat("clock exchange ", i + 1, " came back before it was sent (",
                       absl::FormatDuration(x.t1 - x.t4),
                       "): the controller's clock stepped during the measurement; run again"));
    }
    const absl::Duration delay = std::max(absl::ZeroDuration(), (x.t4 - x.t1) - (x.t3 - x.t2));
    if (have && delay >= best.delay) continue;
    best.delay = delay;
    best.offset = ((x.t2 - x.t1) + (x.t3 - x.t4)) / 2;
    have = true;
  }
  best.exchanges = static_cast<int>(exchanges.size());
  return best;
}

}  // namespace clustercert::controller
