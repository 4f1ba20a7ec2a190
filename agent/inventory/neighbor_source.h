#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"

namespace clustercert::agent::inventory {

// Where each Ethernet rail's cable lands, as the switch announces it over
// LLDP. The production source asks lldpd on the host and receives the
// switch's frames itself for what lldpd does not list
// (host_neighbor_source.h); tests hand in canned neighbours.
class NeighborSource {
 public:
  virtual ~NeighborSource() = default;
  // One entry for each of `netdevs`: its neighbour (with `source` set), or
  // an error whose message says why none was read, in a sentence for the
  // operator. Every netdev is waited for at once: the call returns by
  // `started + wait` (plus the time to close its sockets), sooner when every
  // netdev has its answer.
  virtual std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> Read(
      const std::vector<std::string>& netdevs, absl::Time started, absl::Duration wait) = 0;
};

}  // namespace clustercert::agent::inventory
