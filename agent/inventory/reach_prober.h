#pragma once

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace clustercert::agent::inventory {

// One connect attempt: from `netdev` (bound to it, so only routes through
// it count) to `address`:`port`.
struct ReachAttempt {
  std::string netdev;
  std::string address;  // a literal IPv4 or IPv6 address
  int port = 0;
};

struct ReachOutcome {
  enum Kind { kConnected, kRefused, kTimeout, kUnreachable, kError };
  Kind kind = kError;
  std::string detail;  // the errno text, when there is one
  absl::Duration took;
};

// Where the isolation check's probes go out: TCP connects on a live host,
// canned outcomes in tests. Every attempt runs at once and all are answered
// by `timeout`; the outcomes come back in the attempts' order.
class ReachProber {
 public:
  virtual ~ReachProber() = default;
  virtual std::vector<ReachOutcome> Probe(const std::vector<ReachAttempt>& attempts,
                                          absl::Duration timeout) = 0;
};

}  // namespace clustercert::agent::inventory
