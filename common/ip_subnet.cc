#include "common/ip_subnet.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace clustercert {
namespace {

// 4 bytes for IPv4 (and IPv4-mapped IPv6), 16 for IPv6.
std::optional<std::string> Binary(absl::string_view text) {
  std::string literal(text.substr(0, text.find('%')));
  in_addr v4{};
  if (::inet_pton(AF_INET, literal.c_str(), &v4) == 1) {
    return std::string(reinterpret_cast<const char*>(&v4), sizeof(v4));
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, literal.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return std::string(reinterpret_cast<const char*>(&v6) + 12, 4);
    return std::string(reinterpret_cast<const char*>(&v6), sizeof(v6));
  }
  return std::nullopt;
}

std::string Masked(std::string address, int prefix_length) {
  for (size_t i = 0; i < address.size(); ++i) {
    const int bits = std::clamp(prefix_length - static_cast<int>(i) * 8, 0, 8);
    const unsigned char mask = bits == 0 ? 0 : static_cast<unsigned char>(0xff << (8 - bits));
    address[i] = static_cast<char>(static_cast<unsigned char>(address[i]) & mask);
  }
  return address;
}

}  // namespace

std::optional<IpSubnet> IpSubnet::Of(absl::string_view address, int prefix_length) {
  std::optional<std::string> binary = Binary(address);
  if (!binary.has_value()) return std::nullopt;
  // An IPv4-mapped IPv6 prefix counts the 96 mapping bits.
  if (binary->size() == 4 && address.find(':') != absl::string_view::npos && prefix_length >= 96) {
    prefix_length -= 96;
  }
  const int max = static_cast<int>(binary->size()) * 8;
  if (prefix_length < 0 || prefix_length > max) return std::nullopt;
  return IpSubnet(Masked(*std::move(binary), prefix_length), prefix_length);
}

std::optional<IpSubnet> IpSubnet::Parse(absl::string_view cidr) {
  const size_t slash = cidr.find('/');
  if (slash == absl::string_view::npos) return std::nullopt;
  int prefix_length = 0;
  if (!absl::SimpleAtoi(cidr.substr(slash + 1), &prefix_length)) return std::nullopt;
  return Of(cidr.substr(0, slash), prefix_length);
}

bool IpSubnet::Contains(absl::string_view ip) const {
  std::optional<std::string> binary = Binary(ip);
  if (!binary.has_value() || binary->size() != network_.size()) return false;
  return Masked(*std::move(binary), prefix_length_) == network_;
}

bool IpSubnet::Overlaps(const IpSubnet& other) const {
  if (network_.size() != other.network_.size()) return false;
  const int shorter = std::min(prefix_length_, other.prefix_length_);
  return Masked(network_, shorter) == Masked(other.network_, shorter);
}

std::string IpSubnet::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(network_.size() == 4 ? AF_INET : AF_INET6, network_.data(), text, sizeof(text));
  return absl::StrCat(text, "/", prefix_length_);
}

int PrefixLengthOfMask(const unsigned char* mask, size_t bytes) {
  int length = 0;
  bool zeros = false;
  for (size_t i = 0; i < bytes; ++i) {
    for (int bit = 7; bit >= 0; --bit) {
      const bool one = (mask[i] >> bit) & 1;
      if (one && zeros) return -1;
      if (one) {
        ++length;
      } else {
        zeros = true;
      }
    }
  }
  return length;
}

}  // namespace clustercert
