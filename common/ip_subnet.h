#pragma once

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace clustercert {

// An IPv4 or IPv6 network: an address with its prefix length, host bits
// cleared. IPv4-mapped IPv6 addresses fold to IPv4.
class IpSubnet {
 public:
  // "10.0.0.5/24", "fd00::5/64"; nullopt for anything else. Host bits are
  // cleared, so "10.0.0.5/24" is the subnet 10.0.0.0/24.
  static std::optional<IpSubnet> Parse(absl::string_view cidr);
  // The subnet `address` lies in with `prefix_length` bits of network.
  static std::optional<IpSubnet> Of(absl::string_view address, int prefix_length);

  // Whether the literal address `ip` lies in this subnet (same family).
  bool Contains(absl::string_view ip) const;
  // Whether the two subnets share any address.
  bool Overlaps(const IpSubnet& other) const;
  // "10.0.0.0/24".
  std::string ToString() const;
  int prefix_length() const { return prefix_length_; }

 private:
  IpSubnet(std::string network, int prefix_length)
      : network_(std::move(network)), prefix_length_(prefix_length) {}

  std::string network_;  // 4 or 16 bytes, host bits zero
  int prefix_length_ = 0;
};

// The prefix length of a netmask in binary form (4 or 16 bytes); -1 when the
// mask is not contiguous ones then zeros.
int PrefixLengthOfMask(const unsigned char* mask, size_t bytes);

}  // namespace clustercert
