#include "agent/inventory/ifaddrs_address_source.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/ip_subnet.h"

namespace clustercert::agent::inventory {
namespace {

struct IfaddrsDeleter {
  void operator()(ifaddrs* list) const { ::freeifaddrs(list); }
};

struct AddrinfoDeleter {
  void operator()(addrinfo* list) const { ::freeaddrinfo(list); }
};

// The numeric text of an AF_INET/AF_INET6 socket address; empty for other families.
std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    if (::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text)) != nullptr) return text;
  } else if (address->sa_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text)) != nullptr) return text;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<InterfaceAddress>> IfaddrsAddressSource::List() {
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) {
    return absl::UnavailableError(absl::StrCat("getifaddrs: ", std::strerror(errno)));
  }
  std::unique_ptr<ifaddrs, IfaddrsDeleter> list(raw);
  std::vector<InterfaceAddress> addresses;
  for (const ifaddrs* entry = list.get(); entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_name == nullptr) continue;
    std::string text = AddressText(entry->ifa_addr);
    if (text.empty()) continue;
    int prefix_length = -1;
    if (const sockaddr* mask = entry->ifa_netmask; mask != nullptr) {
      if (mask->sa_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(mask);
        prefix_length = PrefixLengthOfMask(reinterpret_cast<const unsigned char*>(&v4->sin_addr),
                                           sizeof(v4->sin_addr));
      } else if (mask->sa_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(mask);
        prefix_length = PrefixLengthOfMask(reinterpret_cast<const unsigned char*>(&v6->sin6_addr),
                                           sizeof(v6->sin6_addr));
      }
    }
    addresses.push_back(InterfaceAddress{entry->ifa_name, std::move(text), prefix_length});
  }
  return addresses;
}

absl::StatusOr<std::vector<std::string>> GetaddrinfoHostResolver::Resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* raw = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &raw);
  if (rc != 0) {
    std::string reason = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
    std::string message = absl::StrCat("cannot resolve '", host, "': ", reason);
    if (rc == EAI_NONAME || rc == EAI_NODATA) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  std::unique_ptr<addrinfo, AddrinfoDeleter> list(raw);
  std::vector<std::string> addresses;
  for (const addrinfo* entry = list.get(); entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_addr == nullptr) continue;
    std::string text = AddressText(entry->ai_addr);
    if (!text.empty() && std::find(addresses.begin(), addresses.end(), text) == addresses.end()) {
      addresses.push_back(std::move(text));
    }
  }
  if (addresses.empty()) {
    return absl::NotFoundError(absl::StrCat("'", host, "' resolves to no IPv4/IPv6 address"));
  }
  return addresses;
}

}  // namespace clustercert::agent::inventory
