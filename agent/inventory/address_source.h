#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace clustercert::agent::inventory {

// One address configured on one local netdev.
struct InterfaceAddress {
  std::string netdev;      // "eno1"
  std::string address;     // "10.0.0.5", "fe80::1" (no prefix length, no scope)
  int prefix_length = -1;  // from the netmask; -1 when unknown
};

// The boundary to the host's interface addresses (getifaddrs on a live host).
class AddressSource {
 public:
  virtual ~AddressSource() = default;
  virtual absl::StatusOr<std::vector<InterfaceAddress>> List() = 0;
};

// The boundary to name resolution (/etc/hosts, DNS): the IPv4/IPv6 literals a
// host name stands for, in resolver order.
class HostResolver {
 public:
  virtual ~HostResolver() = default;
  virtual absl::StatusOr<std::vector<std::string>> Resolve(const std::string& host) = 0;
};

}  // namespace clustercert::agent::inventory
