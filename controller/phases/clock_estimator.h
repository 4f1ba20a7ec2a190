#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace clustercert::controller {

// One NTP-style exchange: t1 the controller sent, t2 the agent received, t3
// the agent answered (agent clock), t4 the controller received.
struct TimeExchange {
  absl::Time t1;
  absl::Time t2;
  absl::Time t3;
  absl::Time t4;
};

// The agent's clock against the controller's (RFC 5905's arithmetic):
// offset = ((t2 - t1) + (t3 - t4)) / 2 and delay = (t4 - t1) - (t3 - t2) for
// each exchange; the exchange with the lowest delay is kept, since queueing
// only ever adds delay and the offset's error is at most half the delay.
struct ClockEstimate {
  absl::Duration offset;  // agent - controller
  absl::Duration delay;   // the kept exchange's network round trip
  int exchanges = 0;      // exchanges considered

  absl::Duration uncertainty() const { return delay / 2; }
};

// InvalidArgument when there are no exchanges or one has t4 before t1 (the
// controller's own clock stepped backwards mid-exchange). A negative delay
// (the agent's processing time longer than the round trip, a clock step on
// the agent) counts as zero.
absl::StatusOr<ClockEstimate> EstimateClock(const std::vector<TimeExchange>& exchanges);

}  // namespace clustercert::controller
