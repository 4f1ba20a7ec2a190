#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/inventory/address_source.h"

namespace clustercert::agent::inventory {

// The live AddressSource: every IPv4 and IPv6 address getifaddrs() reports.
class IfaddrsAddressSource : public AddressSource {
 public:
  absl::StatusOr<std::vector<InterfaceAddress>> List() override;
};

// The live HostResolver: getaddrinfo() (AF_UNSPEC, numeric output), so names
// resolve exactly as the rest of the host resolves them.
class GetaddrinfoHostResolver : public HostResolver {
 public:
  absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) override;
};

}  // namespace clustercert::agent::inventory
