#include "agent/inventory/netlink_socket.h"

#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace clustercert::agent::inventory {

absl::StatusOr<NetlinkSocket> NetlinkSocket::Open(absl::Duration timeout) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) {
    int err = errno;
    std::string message = absl::StrCat("cannot open an rtnetlink socket: ", std::strerror(err));
    if (err == EPERM || err == EACCES) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  }
  NetlinkSocket socket(fd);
  timeval tv{};
  int64_t micros = absl::ToInt64Microseconds(timeout);
  tv.tv_sec = micros / 1000000;
  tv.tv_usec = micros % 1000000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return socket;
}

NetlinkSocket::NetlinkSocket(NetlinkSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

NetlinkSocket::~NetlinkSocket() {
  if (fd_ >= 0) ::close(fd_);
}

bool ForEachAttribute(const char* data, size_t length,
                      const std::function<void(uint16_t, const char*, size_t)>& visit) {
  while (length >= NLA_HDRLEN) {
    nlattr attr;
    std::memcpy(&attr, data, sizeof(attr));
    if (attr.nla_len < NLA_HDRLEN || attr.nla_len > length) return false;
    visit(attr.nla_type & NLA_TYPE_MASK, data + NLA_HDRLEN, attr.nla_len - NLA_HDRLEN);
    size_t step = NLA_ALIGN(attr.nla_len);
    if (step >= length) break;
    data += step;
    length -= step;
  }
  return true;
}

}  // namespace clustercert::agent::inventory
