#include "agent/peer/tcp_path_mtu.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::agent::peer {
namespace {

// No route's MTU is larger (the biggest jumbo frames are 9216; loopback is
// 65536) and no IPv4 link's smaller.
constexpr uint32_t kMaxProbeBytes = 65535;
constexpr uint32_t kMinIpv4Mtu = 68;

int Level(int family) { return family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP; }

absl::Status Errno(const std::string& doing) {
  return absl::InternalError(absl::StrCat(doing, ": ", std::strerror(errno)));
}

absl::Status SetDontFragment(int fd, int family) {
  // IPV6_PMTUDISC_DO and IP_PMTUDISC_DO are both 2 on Linux; one value.
  static_assert(IPV6_PMTUDISC_DO == IP_PMTUDISC_DO);
  const int value = IP_PMTUDISC_DO;
  const int option = family == AF_INET6 ? IPV6_MTU_DISCOVER : IP_MTU_DISCOVER;
  if (::setsockopt(fd, Level(family), option, &value, sizeof(value)) != 0) {
    return Errno("cannot set the don't-fragment flag");
  }
  return absl::OkStatus();
}

std::optional<uint32_t> RouteMtuOf(int fd, int family) {
  int mtu = 0;
  socklen_t length = sizeof(mtu);
  const int option = family == AF_INET6 ? IPV6_MTU : IP_MTU;
  if (::getsockopt(fd, Level(family), option, &mtu, &length) != 0 || mtu <= 0) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(mtu);
}

// A UDP socket from `local` connected to `peer`, DF set: the route is
// resolved, nothing is sent.
absl::StatusOr<UniqueFd> ConnectedUdp(const SocketAddress& local, const SocketAddress& peer) {
  UniqueFd fd(::socket(peer.family(), SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Errno("cannot open a UDP socket");
  if (absl::Status df = SetDontFragment(fd.get(), peer.family()); !df.ok()) return df;
  if (::bind(fd.get(), local.get(), local.length()) != 0) {
    return Errno(absl::StrCat("cannot bind ", local.ip()));
  }
  if (::connect(fd.get(), peer.get(), peer.length()) != 0) {
    return Errno(absl::StrCat("no route from ", local.ip(), " to ", peer.ip()));
  }
  return fd;
}

// Sends one datagram of `packet_bytes` (IP and UDP headers included). A
// send the route refuses (EMSGSIZE) or an earlier ICMP error reported on the
// socket (ECONNREFUSED from the peer's closed port) is no failure: the route
// MTU read next is what counts.
void SendProbe(int fd, int family, uint32_t packet_bytes) {
  const uint32_t overhead = UdpOverheadBytes(family);
  if (packet_bytes <= overhead) return;
  const std::vector<char> payload(packet_bytes - overhead, 0);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::send(fd, payload.data(), payload.size(), 0) >= 0) return;
    if (errno != ECONNREFUSED) return;  // a pending ICMP error, reported once: retry
  }
}

// Waits up to `wait` for the ICMP answer to a probe: on a connected UDP
// socket both fragmentation-needed (from a hop) and port-unreachable (from
// the peer) set the socket's error, which poll reports as POLLERR.
void AwaitAnswer(int fd, absl::Duration wait) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point until = Clock::now() + absl::ToChronoMilliseconds(wait);
  for (auto left = until - Clock::now(); left > Clock::duration::zero();
       left = until - Clock::now()) {
    pollfd answer{fd, 0, 0};  // POLLERR is reported whatever events asks for
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    const int ready = ::poll(&answer, 1, static_cast<int>(ms));
    if (ready > 0 || (ready < 0 && errno != EINTR)) return;
  }
}

}  // namespace

uint32_t UdpOverheadBytes(int family) { return family == AF_INET6 ? 40 + 8 : 20 + 8; }

v1::PathMtu ProbePathMtu(const SocketAddress& local, const SocketAddress& peer,
                         absl::Duration wait) {
  v1::PathMtu mtu;
  mtu.set_peer_address(peer.ip());
  absl::StatusOr<UniqueFd> fd = ConnectedUdp(local, peer);
  if (!fd.ok()) {
    mtu.set_note(absl::StrCat("the route to ", peer.ip(), " is unknown: ", fd.status().message()));
    return mtu;
  }
  const std::optional<uint32_t> before = RouteMtuOf(fd->get(), peer.family());
  if (!before || *before < kMinIpv4Mtu || *before > kMaxProbeBytes) {
    mtu.set_note(absl::StrCat("the kernel gave no MTU for the route to ", peer.ip()));
    return mtu;
  }
  mtu.set_local_route_mtu(*before);
  SendProbe(fd->get(), peer.family(), *before);
  AwaitAnswer(fd->get(), wait);
  // A second full-size send fails with EMSGSIZE once an ICMP lowered the
  // route's MTU, which also refreshes the socket's cached route.
  SendProbe(fd->get(), peer.family(), *before);
  const std::optional<uint32_t> after = RouteMtuOf(fd->get(), peer.family());
  if (after) {
    mtu.set_route_mtu(*after);
  } else {
    mtu.set_note(
        absl::StrCat("the kernel gave no MTU for the route to ", peer.ip(), " after the probe"));
  }
  return mtu;
}

namespace {

// The route after the probe is shorter than before it: a hop answered.
bool HopAnswered(const v1::PathMtu& mtu) {
  return mtu.has_local_route_mtu() && mtu.has_route_mtu() &&
         mtu.route_mtu() < mtu.local_route_mtu();
}

constexpr char kEndToEnd[] =
    "set MTU 9000 on every netdev, route, switch port and VLAN of the path (mtu.path)";

}  // namespace

std::string PathMtuStallClause(const v1::PathMtu& mtu, uint32_t packet_bytes) {
  if (!mtu.has_route_mtu() || mtu.route_mtu() >= packet_bytes) return "";
  return absl::StrCat(
      "; the path MTU is the likely cause: the test sends ", packet_bytes,
      "-byte packets but the route to ", mtu.peer_address(), " carries only ", mtu.route_mtu(),
      HopAnswered(mtu)
          ? " (a routed hop answered a don't-fragment probe with ICMP fragmentation-needed)"
          : " (this node's own route or netdev MTU)",
      ", and a packet too big for a hop is dropped: ", kEndToEnd);
}

std::string ShortHopRefusal(const v1::PathMtu& mtu, uint32_t packet_bytes) {
  if (!HopAnswered(mtu) || mtu.route_mtu() >= packet_bytes) return "";
  return absl::StrCat("the route to ", mtu.peer_address(), " carries only ", mtu.route_mtu(),
                      "-byte packets (a routed hop answered a don't-fragment probe with ICMP "
                      "fragmentation-needed) and the test sends ",
                      packet_bytes, "-byte packets, which that hop drops: ", kEndToEnd);
}

}  // namespace clustercert::agent::peer
