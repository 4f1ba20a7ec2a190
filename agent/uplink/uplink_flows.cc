#include "agent/uplink/uplink_flows.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"

namespace clustercert::agent::uplink {

double FlowGbps(const FlowTally& tally) {
  if (tally.seconds <= 0) return 0;
  return static_cast<double>(tally.bytes) * 8 / tally.seconds / 1e9;
}

void Summarise(FlowsResult& result, absl::Span<const FlowWindow> windows) {
  result.total_bytes = 0;
  std::optional<SteadyClock::time_point> earliest;
  std::optional<SteadyClock::time_point> latest;
  for (size_t i = 0; i < result.flows.size(); ++i) {
    FlowTally& flow = result.flows[i];
    result.total_bytes += flow.bytes;
    flow.seconds = 0;
    if (flow.bytes == 0 || i >= windows.size()) continue;
    const FlowWindow& window = windows[i];
    flow.seconds = std::max(0.0, std::chrono::duration<double>(window.last - window.first).count());
    if (!earliest || window.first < *earliest) earliest = window.first;
    if (!latest || window.last > *latest) latest = window.last;
  }
  result.seconds = 0;
  result.aggregate_gbps = 0;
  if (earliest && latest && *latest > *earliest) {
    result.seconds = std::chrono::duration<double>(*latest - *earliest).count();
    result.aggregate_gbps = static_cast<double>(result.total_bytes) * 8 / result.seconds / 1e9;
  }
}

absl::Status ValidateFlowSpec(const FlowSpec& spec, absl::string_view target) {
  if (spec.flows < 1 || spec.flows > kMaxFlows) {
    return absl::InvalidArgumentError(absl::StrCat("uplink test of ", target, " asks for ",
                                                   spec.flows, " flows: use 1 to ", kMaxFlows));
  }
  if (spec.duration <= absl::ZeroDuration() || spec.duration > kMaxDuration) {
    return absl::InvalidArgumentError(
        absl::StrCat("uplink test of ", target, " has duration ",
                     absl::FormatDuration(spec.duration), ": give a positive duration of at most ",
                     absl::FormatDuration(kMaxDuration), " such as 5s"));
  }
  if (!spec.bind_ip.empty()) {
    in6_addr scratch;
    if (inet_pton(AF_INET, spec.bind_ip.c_str(), &scratch) != 1 &&
        inet_pton(AF_INET6, spec.bind_ip.c_str(), &scratch) != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "uplink test of ", target, " binds to \"", spec.bind_ip,
          "\", which is not a literal IPv4 or IPv6 address: give the node's data-plane IP "
          "or leave it empty"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDestination(const sockaddr* address) {
  if (absl::Status allowed = CheckUplinkSockaddr(address); !allowed.ok()) return allowed;
  if (address->sa_family != AF_INET) return absl::OkStatus();
  const in_addr target = reinterpret_cast<const sockaddr_in*>(address)->sin_addr;
  ifaddrs* list = nullptr;
  // Without the interface list only the fixed rules above apply; the
  // kernel still refuses a TCP connect to a broadcast address.
  if (getifaddrs(&list) != 0) return absl::OkStatus();
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, freeifaddrs);
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if ((entry->ifa_flags & IFF_BROADCAST) == 0 || entry->ifa_broadaddr == nullptr ||
        entry->ifa_broadaddr->sa_family != AF_INET) {
      continue;
    }
    if (reinterpret_cast<const sockaddr_in*>(entry->ifa_broadaddr)->sin_addr.s_addr ==
        target.s_addr) {
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &target, text, sizeof(text));
      return absl::InvalidArgumentError(
          absl::StrCat("the address ", text, " is the broadcast address of ", entry->ifa_name,
                       " on this node; give the storage server's own address"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDurationFits(const FlowSpec& spec, absl::Time now, absl::string_view what) {
  if (now + spec.duration <= spec.deadline) return absl::OkStatus();
  const absl::Duration left =
      absl::Trunc(std::max(absl::ZeroDuration(), spec.deadline - now), absl::Milliseconds(1));
  return absl::DeadlineExceededError(absl::StrCat(
      what, " cannot run for ", absl::FormatDuration(spec.duration), ": only ",
      absl::FormatDuration(left),
      " are left before the deadline; give the step a longer deadline or a shorter duration"));
}

int WorkerCount(int flows) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::clamp(flows, 1, cores);
}

}  // namespace clustercert::agent::uplink
