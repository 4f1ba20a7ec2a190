#pragma once

#include "agent/inventory/reach_prober.h"
#include "common/clock.h"

namespace clustercert::agent::inventory {

// Non-blocking TCP connects bound to a netdev (SO_BINDTODEVICE), all in
// flight together under one poll(2) deadline. An answer of any kind
// (connected, or a RST: refused) means the packet reached the other side;
// silence until the deadline, or an unreachable from the kernel or a router,
// means it did not. Nothing is sent after the handshake. With no route
// through the netdev the kernel takes the target as on-link and asks for it
// by ARP/ND there: a host of the other fabric sharing the segment, with a
// way back, answers, which is the leak this looks for.
class SocketReachProber final : public ReachProber {
 public:
  explicit SocketReachProber(Clock& clock) : clock_(clock) {}
  std::vector<ReachOutcome> Probe(const std::vector<ReachAttempt>& attempts,
                                  absl::Duration timeout) override;

 private:
  Clock& clock_;  // poll(2) waits; the clock says how long is left
};

}  // namespace clustercert::agent::inventory
