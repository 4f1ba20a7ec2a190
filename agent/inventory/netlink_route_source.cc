#include "agent/inventory/netlink_route_source.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/inventory/netlink_socket.h"

namespace clustercert::agent::inventory {
namespace {

constexpr size_t kReceiveBufferBytes = size_t{256} * 1024;

std::string AddressText(int family, const char* bytes, size_t size) {
  const size_t expected = family == AF_INET ? 4 : 16;
  if (size < expected) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(family, bytes, text, sizeof(text)) == nullptr) return "";
  return text;
}

std::string NetdevName(uint32_t index) {
  char name[IF_NAMESIZE] = {};
  if (index == 0 || ::if_indextoname(index, name) == nullptr) return "";
  return name;
}

// A next hop's gateway: RTA_GATEWAY in the route's family, or RTA_VIA (an
// IPv4 route through an IPv6 link-local neighbour, RFC 5549).
std::string GatewayOf(int family, uint16_t type, const char* payload, size_t size) {
  if (type == RTA_GATEWAY) return AddressText(family, payload, size);
  if (type == RTA_VIA && size >= sizeof(rtvia)) {
    rtvia via;
    std::memcpy(&via, payload, sizeof(via));
    return AddressText(via.rtvia_family, payload + sizeof(rtvia), size - sizeof(rtvia));
  }
  return "";
}

// The routes one RTM_NEWROUTE message describes (one per next hop).
void AppendRoutes(const nlmsghdr* message, std::vector<KernelRoute>& routes) {
  if (message->nlmsg_len < NLMSG_LENGTH(sizeof(rtmsg))) return;
  rtmsg header;
  std::memcpy(&header, NLMSG_DATA(message), sizeof(header));
  if (header.rtm_type != RTN_UNICAST || (header.rtm_flags & RTM_F_CLONED) != 0) return;
  const int family = header.rtm_family;
  KernelRoute base;
  base.table = header.rtm_table;
  std::string destination = family == AF_INET ? "0.0.0.0" : "::";
  std::vector<KernelRoute> hops;
  const char* attrs = reinterpret_cast<const char*>(message) + NLMSG_SPACE(sizeof(rtmsg));
  const size_t length = message->nlmsg_len - NLMSG_SPACE(sizeof(rtmsg));
  ForEachAttribute(attrs, length, [&](uint16_t type, const char* payload, size_t size) {
    if (type == RTA_DST) {
      destination = AddressText(family, payload, size);
    } else if (type == RTA_TABLE && size >= 4) {
      std::memcpy(&base.table, payload, 4);
    } else if (type == RTA_OIF && size >= 4) {
      uint32_t index = 0;
      std::memcpy(&index, payload, 4);
      base.netdev = NetdevName(index);
    } else if (type == RTA_GATEWAY || type == RTA_VIA) {
      base.gateway = GatewayOf(family, type, payload, size);
    } else if (type == RTA_MULTIPATH) {
      while (size >= sizeof(rtnexthop)) {
        rtnexthop hop;
        std::memcpy(&hop, payload, sizeof(hop));
        if (hop.rtnh_len < sizeof(rtnexthop) || hop.rtnh_len > size) break;
        KernelRoute route;
        route.netdev = NetdevName(static_cast<uint32_t>(hop.rtnh_ifindex));
        ForEachAttribute(payload + RTNH_LENGTH(0), hop.rtnh_len - RTNH_LENGTH(0),
                         [&](uint16_t hop_type, const char* value, size_t value_size) {
                           if (hop_type == RTA_GATEWAY || hop_type == RTA_VIA) {
                             route.gateway = GatewayOf(family, hop_type, value, value_size);
                           }
                         });
        hops.push_back(std::move(route));
        const size_t step = RTNH_ALIGN(hop.rtnh_len);
        if (step >= size) break;
        payload += step;
        size -= step;
      }
    }
  });
  if (base.table == RT_TABLE_LOCAL || destination.empty()) return;
  base.destination = absl::StrCat(destination, "/", static_cast<int>(header.rtm_dst_len));
  if (hops.empty()) hops.push_back(base);
  for (KernelRoute& hop : hops) {
    hop.destination = base.destination;
    hop.table = base.table;
    routes.push_back(std::move(hop));
  }
}

absl::Status DumpFamily(int family, absl::Duration timeout, std::vector<KernelRoute>& routes) {
  auto socket = NetlinkSocket::Open(timeout);
  if (!socket.ok()) return socket.status();
  struct {
    nlmsghdr header;
    rtmsg route;
  } request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  request.header.nlmsg_type = RTM_GETROUTE;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = 1;
  request.route.rtm_family = static_cast<unsigned char>(family);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(socket->fd(), &request, request.header.nlmsg_len, 0,
               reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    return absl::UnavailableError(
        absl::StrCat("rtnetlink RTM_GETROUTE request failed: ", std::strerror(errno)));
  }
  std::vector<char> buffer(kReceiveBufferBytes);
  while (true) {
    ssize_t n = ::recv(socket->fd(), buffer.data(), buffer.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("rtnetlink RTM_GETROUTE reply failed: ", std::strerror(errno)));
    }
    auto remaining = static_cast<size_t>(n);
    for (auto* message = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(message, remaining);
         message = NLMSG_NEXT(message, remaining)) {
      if (message->nlmsg_type == NLMSG_DONE) return absl::OkStatus();
      if (message->nlmsg_type == NLMSG_ERROR) {
        nlmsgerr error{};
        std::memcpy(&error, NLMSG_DATA(message), sizeof(error));
        return absl::UnavailableError(
            absl::StrCat("rtnetlink RTM_GETROUTE: ", std::strerror(-error.error)));
      }
      if (message->nlmsg_type == RTM_NEWROUTE) AppendRoutes(message, routes);
      if (routes.size() > NetlinkRouteSource::kMaxRoutes) {
        return absl::ResourceExhaustedError(absl::StrCat("the routing tables hold more than ",
                                                         NetlinkRouteSource::kMaxRoutes,
                                                         " routes; not read further"));
      }
    }
  }
}

}  // namespace

NetlinkRouteSource::NetlinkRouteSource(absl::Duration timeout) : timeout_(timeout) {}

absl::StatusOr<std::vector<KernelRoute>> NetlinkRouteSource::Routes() {
  std::vector<KernelRoute> routes;
  for (int family : {AF_INET, AF_INET6}) {
    if (absl::Status status = DumpFamily(family, timeout_, routes); !status.ok()) return status;
  }
  return routes;
}

}  // namespace clustercert::agent::inventory
