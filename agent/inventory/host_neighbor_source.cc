#include "agent/inventory/host_neighbor_source.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/inventory/lldp_receiver.h"
#include "agent/inventory/lldpcli_reader.h"

namespace clustercert::agent::inventory {
namespace {

// What lldpd said about `netdev`, for a netdev the receive did not answer.
std::string LldpdSaid(const absl::StatusOr<LldpcliNeighbors>& lldpd, const std::string& netdev) {
  if (!lldpd.ok()) return std::string(lldpd.status().message());
  auto rejected = lldpd->rejected.find(netdev);
  if (rejected != lldpd->rejected.end()) return absl::StrJoin(rejected->second, "; ");
  return absl::StrCat("lldpd runs here but lists no neighbour on ", netdev);
}

}  // namespace

std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> HostNeighborSource::Read(
    const std::vector<std::string>& netdevs, absl::Time started, absl::Duration wait) {
  LldpReceiver receiver = LldpReceiver::Open(netdevs);
  absl::StatusOr<LldpcliNeighbors> lldpd =
      lldpcli_ == nullptr
          ? absl::StatusOr<LldpcliNeighbors>(absl::FailedPreconditionError("lldpd was not asked"))
          : LldpcliReader(*lldpcli_).Read(
                std::max(started + wait - clock_.Now(), absl::Milliseconds(100)));
  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> result;
  std::set<std::string> unanswered;
  for (const std::string& netdev : netdevs) {
    if (lldpd.ok()) {
      auto found = lldpd->by_netdev.find(netdev);
      if (found != lldpd->by_netdev.end()) {
        result.emplace(netdev, found->second);
        continue;
      }
    }
    unanswered.insert(netdev);
  }
  if (unanswered.empty()) return result;
  for (auto& [netdev, neighbor] : receiver.Receive(unanswered, started, wait, clock_)) {
    if (!neighbor.ok()) {
      neighbor = absl::Status(
          neighbor.status().code(),
          absl::StrCat(neighbor.status().message(), "; on this host, ", LldpdSaid(lldpd, netdev)));
    }
    result.insert_or_assign(netdev, std::move(neighbor));
  }
  return result;
}

}  // namespace clustercert::agent::inventory
