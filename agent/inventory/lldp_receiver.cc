#include "agent/inventory/lldp_receiver.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/inventory/lldp_frame.h"
#include "common/errno_text.h"

namespace clustercert::agent::inventory {
namespace {

constexpr int kReceiveBufferBytes = 64 * 1024;
constexpr unsigned char kLldpGroup[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

std::string Seconds(absl::Duration wait) { return absl::StrCat(absl::ToDoubleSeconds(wait), " s"); }

absl::Status SocketError(const std::string& netdev, const char* step, int err) {
  std::string text =
      absl::StrCat("cannot receive LLDP on ", netdev, " (", step, ": ", ErrnoText(err), ")");
  if (err == EPERM || err == EACCES) {
    absl::StrAppend(&text,
                    ": an AF_PACKET socket needs CAP_NET_RAW (the agent's unit grants it; "
                    "check AmbientCapabilities) and AF_PACKET in RestrictAddressFamilies");
  }
  return absl::UnavailableError(text);
}

// Drops frames this host sends (its own lldpd's) and keeps at most one byte
// more than a frame may have, so an over-long one shows as too long.
bool AttachFilter(int fd) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_PKTTYPE)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, static_cast<uint32_t>(kMaxLldpFrameBytes + 1)),
      BPF_STMT(BPF_RET | BPF_K, 0),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) == 0;
}

// The socket is created for protocol 0, which receives nothing, and bound
// to 0x88cc on the one ifindex: no frame of another netdev can slip in
// before the bind.
absl::StatusOr<UniqueFd> OpenSocket(const std::string& netdev) {
  const unsigned index = netdev.size() < IFNAMSIZ ? ::if_nametoindex(netdev.c_str()) : 0;
  if (index == 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot receive LLDP on ", netdev, ": this host has no such netdev now"));
  }
  UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return SocketError(netdev, "socket(AF_PACKET)", errno);
  if (!AttachFilter(fd.get())) return SocketError(netdev, "SO_ATTACH_FILTER", errno);
  const int buffer = kReceiveBufferBytes;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_LLDP);
  address.sll_ifindex = static_cast<int>(index);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return SocketError(netdev, "bind", errno);
  }
  packet_mreq membership{};
  membership.mr_ifindex = static_cast<int>(index);
  membership.mr_type = PACKET_MR_MULTICAST;
  membership.mr_alen = sizeof(kLldpGroup);
  std::memcpy(membership.mr_address, kLldpGroup, sizeof(kLldpGroup));
  if (::setsockopt(fd.get(), SOL_PACKET, PACKET_ADD_MEMBERSHIP, &membership, sizeof(membership)) !=
      0) {
    return SocketError(netdev, "PACKET_ADD_MEMBERSHIP", errno);
  }
  return fd;
}

std::string NoFrame(const std::string& netdev, absl::Duration wait, const std::string& refused) {
  std::string text = absl::StrCat("no LLDP frame on ", netdev, " within ", Seconds(wait));
  if (refused.empty()) {
    absl::StrAppend(&text, ": LLDP may be off on the switch port, or lldpd is not running there");
  } else {
    absl::StrAppend(&text, " that this agent could use: ", refused);
  }
  return text;
}

}  // namespace

LldpReceiver LldpReceiver::Open(const std::vector<std::string>& netdevs) {
  LldpReceiver receiver;
  for (const std::string& netdev : netdevs) {
    Port port;
    port.netdev = netdev;
    absl::StatusOr<UniqueFd> fd = OpenSocket(netdev);
    if (fd.ok()) {
      port.fd = std::move(*fd);
    } else {
      port.open_error = fd.status();
    }
    receiver.ports_.push_back(std::move(port));
  }
  return receiver;
}

void LldpReceiver::Drain(Port& port,
                         std::map<std::string, absl::StatusOr<v1::LinkNeighbor>>& result) {
  std::string frame(kMaxLldpFrameBytes + 1, '\0');
  while (!port.done && port.frames < kMaxFramesPerNetdev) {
    sockaddr_ll from{};
    socklen_t from_size = sizeof(from);
    const ssize_t got = ::recvfrom(port.fd.get(), frame.data(), frame.size(), MSG_TRUNC,
                                   reinterpret_cast<sockaddr*>(&from), &from_size);
    if (got < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      result[port.netdev] = SocketError(port.netdev, "recvfrom", errno);
      port.done = true;
      return;
    }
    if (from.sll_pkttype == PACKET_OUTGOING) continue;  // the filter's job; kept as a guard
    ++port.frames;
    if (static_cast<size_t>(got) > kMaxLldpFrameBytes) {
      port.refused = absl::StrCat("a frame of ", got, " bytes, longer than an LLDPDU may be");
      continue;
    }
    absl::StatusOr<v1::LinkNeighbor> neighbor =
        ParseLldpFrame(absl::string_view(frame.data(), static_cast<size_t>(got)));
    if (!neighbor.ok()) {
      port.refused = std::string(neighbor.status().message());
    } else if (neighbor->ttl_s() == 0) {
      const std::string sender = neighbor->switch_name().empty()
                                     ? absl::StrCat("at chassis ", neighbor->chassis_id())
                                     : neighbor->switch_name();
      port.refused = absl::StrCat("the switch ", sender,
                                  " sent a shutdown LLDPDU (TTL 0): LLDP was turned off on its "
                                  "port ",
                                  neighbor->port());
    } else {
      neighbor->set_source(absl::StrCat("LLDP frame on ", port.netdev));
      result[port.netdev] = *std::move(neighbor);
      port.done = true;
    }
  }
  if (!port.done && port.frames >= kMaxFramesPerNetdev) {
    result[port.netdev] = absl::ResourceExhaustedError(absl::StrCat(
        port.frames, " frames on ", port.netdev, ", none a usable LLDPDU (the last: ", port.refused,
        "); this agent reads no more"));
    port.done = true;
  }
}

std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> LldpReceiver::Receive(
    const std::set<std::string>& wanted, absl::Time started, absl::Duration wait, Clock& clock) {
  std::map<std::string, absl::StatusOr<v1::LinkNeighbor>> result;
  std::vector<Port*> waiting;
  for (Port& port : ports_) {
    if (wanted.count(port.netdev) == 0 || port.done) continue;
    if (!port.open_error.ok()) {
      result[port.netdev] = port.open_error;
      port.done = true;
      continue;
    }
    waiting.push_back(&port);
  }
  for (const std::string& netdev : wanted) {
    if (std::none_of(ports_.begin(), ports_.end(),
                     [&netdev](const Port& port) { return port.netdev == netdev; })) {
      result[netdev] = absl::FailedPreconditionError(
          absl::StrCat("no LLDP socket was opened on ", netdev, " before the wait"));
    }
  }
  const absl::Time deadline = started + wait;
  while (true) {
    waiting.erase(std::remove_if(waiting.begin(), waiting.end(), [](Port* p) { return p->done; }),
                  waiting.end());
    const absl::Duration left = deadline - clock.Now();
    if (waiting.empty() || left <= absl::ZeroDuration()) break;
    std::vector<pollfd> fds;
    fds.reserve(waiting.size());
    for (Port* port : waiting) fds.push_back({port->fd.get(), POLLIN, 0});
    const int timeout_ms = static_cast<int>(std::clamp<int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), 1, 1000));
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) Drain(*waiting[i], result);
    }
  }
  for (Port* port : waiting) {
    if (!port->done) {
      result[port->netdev] = absl::NotFoundError(NoFrame(port->netdev, wait, port->refused));
    }
  }
  return result;
}

}  // namespace clustercert::agent::inventory
