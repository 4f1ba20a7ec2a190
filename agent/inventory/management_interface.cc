#include "agent/inventory/management_interface.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kMaxListedAddresses = 12;

// An address in binary: 4 bytes for IPv4 (IPv4-mapped IPv6 folded to it), 16 for IPv6.
using BinaryAddress = std::string;

std::optional<BinaryAddress> ParseAddress(absl::string_view text) {
  std::string literal(text.substr(0, text.find('%')));  // drop an IPv6 zone ("fe80::1%eth0")
  in_addr v4{};
  if (::inet_pton(AF_INET, literal.c_str(), &v4) == 1) {
    return BinaryAddress(reinterpret_cast<const char*>(&v4), sizeof(v4));
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, literal.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return BinaryAddress(reinterpret_cast<const char*>(&v6) + 12, 4);
    return BinaryAddress(reinterpret_cast<const char*>(&v6), sizeof(v6));
  }
  return std::nullopt;
}

bool IsWildcard(const BinaryAddress& address) {
  return std::all_of(address.begin(), address.end(), [](char c) { return c == 0; });
}

// "[::1]:7070" -> "::1", "10.0.0.5:7070" -> "10.0.0.5", "node01:7070" -> "node01";
// a bare IPv6 literal keeps its colons.
std::string HostPart(absl::string_view dialed) {
  dialed = absl::StripAsciiWhitespace(dialed);
  if (!dialed.empty() && dialed.front() == '[') {
    auto close = dialed.find(']');
    if (close != absl::string_view::npos) return std::string(dialed.substr(1, close - 1));
  }
  auto colon = dialed.find(':');
  if (colon != absl::string_view::npos && dialed.find(':', colon + 1) == absl::string_view::npos) {
    return std::string(dialed.substr(0, colon));
  }
  return std::string(dialed);
}

}  // namespace

absl::StatusOr<std::string> ManagementNetdev(absl::string_view dialed_host,
                                             AddressSource& addresses, HostResolver& resolver) {
  absl::StatusOr<InterfaceAddress> address = ManagementAddress(dialed_host, addresses, resolver);
  if (!address.ok()) return address.status();
  return address->netdev;
}

absl::StatusOr<InterfaceAddress> ManagementAddress(absl::string_view dialed_host,
                                                   AddressSource& addresses,
                                                   HostResolver& resolver) {
  const std::string host = HostPart(dialed_host);
  if (host.empty()) {
    return absl::InvalidArgumentError(
        "no dialed host given: the controller must send the host it dialed to name the "
        "management netdev");
  }

  std::vector<std::string> candidates;
  if (auto literal = ParseAddress(host); literal.has_value()) {
    if (IsWildcard(*literal)) {
      return absl::NotFoundError(absl::StrCat(
          "the agent listens on all interfaces and the controller dialed ", host,
          ": no single netdev is the management interface; start the agent with --listen "
          "<management address>:<port> and dial that address"));
    }
    candidates.push_back(host);
  } else {
    auto resolved = resolver.Resolve(host);
    if (!resolved.ok()) {
      return absl::NotFoundError(
          absl::StrCat("the controller dialed '", host,
                       "', which does not resolve here: ", resolved.status().message()));
    }
    candidates = *std::move(resolved);
  }

  auto local = addresses.List();
  if (!local.ok()) {
    return absl::Status(local.status().code(), absl::StrCat("cannot list local addresses to find ",
                                                            host, ": ", local.status().message()));
  }
  for (const auto& candidate : candidates) {
    auto wanted = ParseAddress(candidate);
    if (!wanted.has_value()) continue;
    for (const auto& entry : *local) {
      auto have = ParseAddress(entry.address);
      if (have.has_value() && *have == *wanted) return entry;
    }
  }

  std::vector<std::string> listed;
  for (const auto& entry : *local) {
    if (listed.size() == kMaxListedAddresses) {
      listed.push_back("…");
      break;
    }
    listed.push_back(absl::StrCat(entry.netdev, " ", entry.address));
  }
  const std::string dialed = candidates.size() == 1 && candidates[0] == host
                                 ? host
                                 : absl::StrCat(host, " (", absl::StrJoin(candidates, ", "), ")");
  return absl::NotFoundError(absl::StrCat(
      "the controller dialed ", dialed, ", which is not an address of any local netdev (",
      listed.empty() ? std::string("none") : absl::StrJoin(listed, ", "),
      "): it reached this agent through NAT or a proxy, or dialed another host"));
}

}  // namespace clustercert::agent::inventory
