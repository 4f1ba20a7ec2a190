#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/clock.h"
#include "common/unique_fd.h"

namespace clustercert::agent::inventory {

// Receives the switch's LLDP frames on the rail netdevs itself, for hosts
// where lldpd does not run: one AF_PACKET socket per netdev, bound to its
// ifindex and to ethertype 0x88cc, a member of LLDP's group address
// 01:80:c2:00:00:0e. A classic BPF filter drops what the host itself sends
// (lldpd's own frames) and copies at most kMaxLldpFrameBytes + 1 bytes of a
// frame, so a longer one is seen as too long. Nothing is ever sent. Needs
// CAP_NET_RAW.
//
// The sockets are opened first and read later, so frames that arrive while
// lldpcli is asked are kept (each socket's buffer holds about 64 KiB).
class LldpReceiver {
 public:
  static constexpr int kMaxFramesPerNetdev = 64;

  // A netdev whose socket cannot be opened keeps the error for Receive.
  static LldpReceiver Open(const std::vector<std::string>& netdevs);

  LldpReceiver(LldpReceiver&&) = default;
  LldpReceiver& operator=(LldpReceiver&&) = default;

  // Polls every socket of `wanted` at once until each has a valid LLDPDU
  // (not a shutdown one, TTL 0) or `started + wait` passes. One entry per
  // wanted netdev: the neighbour (source "LLDP frame on eth0"), or why none
  // ("no LLDP frame on eth0 within 31 s: ..."). At most
  // kMaxFramesPerNetdev frames are read from each.
  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> Receive(
      const std::set<std::string>& wanted, absl::Time started, absl::Duration wait, Clock& clock);

 private:
  struct Port {
    std::string netdev;
    UniqueFd fd;
    absl::Status open_error;
    int frames = 0;
    std::string refused;  // why the last frame was not used
    bool done = false;
  };

  LldpReceiver() = default;
  // Reads what is queued on `port`; sets `result` once a frame is usable or
  // the socket must be given up.
  void Drain(Port& port, std::map<std::string, absl::StatusOr<v1::LinkNeighbor>>& result);

  std::vector<Port> ports_;
};

}  // namespace clustercert::agent::inventory
