#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/inventory/address_source.h"

namespace clustercert::agent::inventory {

// Names the netdev that carries `dialed_host`, the host the controller used to
// reach this agent: an IPv4/IPv6 literal ("10.0.0.5", "::1", "[fe80::1]",
// with or without ":port") or a name resolved through `resolver`
// ("localhost", "node01"). Addresses compare as binary (so "::ffff:10.0.0.5"
// equals "10.0.0.5"); for a name the first resolved address found on a local
// netdev wins.
//
// Errors: InvalidArgument for an empty host; NotFound when the host is the
// wildcard 0.0.0.0 / :: ("the agent listens on all interfaces and the
// controller dialed 0.0.0.0: …"), when a name does not resolve, or when no
// local netdev carries the address (the message names the address and the
// local ones); the AddressSource's own error when it fails.
absl::StatusOr<std::string> ManagementNetdev(absl::string_view dialed_host,
                                             AddressSource& addresses, HostResolver& resolver);

// The same search, returning the matching local address itself (netdev,
// address, prefix length), from which the management subnet follows.
absl::StatusOr<InterfaceAddress> ManagementAddress(absl::string_view dialed_host,
                                                   AddressSource& addresses,
                                                   HostResolver& resolver);

}  // namespace clustercert::agent::inventory
