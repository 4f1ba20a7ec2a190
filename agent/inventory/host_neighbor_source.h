#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/inventory/neighbor_source.h"
#include "common/clock.h"
#include "common/process/command_runner.h"

namespace clustercert::agent::inventory {

// The live NeighborSource: lldpd first, the agent's own receive for the
// rest. The LLDP sockets are opened before lldpcli is asked, so one wait
// covers both; lldpcli gets at most LldpcliReader::kTimeout of it. A netdev
// lldpd lists takes lldpd's neighbour; every other one takes the first
// usable frame its socket receives before the wait ends. A netdev that got
// neither says why for both: "no LLDP frame on eth0 within 31 s: LLDP may be
// off on the switch port, or lldpd is not running there (lldpd on this host:
// lldpcli not found ...)".
class HostNeighborSource final : public NeighborSource {
 public:
  // `lldpcli` may be null (lldpd is then not asked); both must outlive the
  // source.
  HostNeighborSource(process::CommandRunner* lldpcli, Clock& clock)
      : lldpcli_(lldpcli), clock_(clock) {}

  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> Read(
      const std::vector<std::string>& netdevs, absl::Time started, absl::Duration wait) override;

 private:
  process::CommandRunner* lldpcli_;
  Clock& clock_;
};

}  // namespace clustercert::agent::inventory
