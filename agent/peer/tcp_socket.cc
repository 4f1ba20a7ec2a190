#include "agent/peer/tcp_socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/errno_text.h"

namespace clustercert::agent::peer {
namespace {

// Marks the status of a wait that its no-progress limit ended.
constexpr char kNoProgressPayload[] = "clustercert.dev/tcp-no-progress";

// Errors that mean the peer (or the path to it) is gone, not a local fault.
bool IsPeerGone(int err) {
  return err == ECONNRESET || err == EPIPE || err == ECONNREFUSED || err == ECONNABORTED ||
         err == EHOSTUNREACH || err == ENETUNREACH || err == ETIMEDOUT || err == EHOSTDOWN ||
         err == ENETDOWN;
}

absl::Status ErrnoStatus(int err, absl::string_view what) {
  std::string message = absl::StrCat(what, ": ", ErrnoText(err));
  if (IsPeerGone(err)) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

absl::StatusOr<UniqueFd> NewSocket(int family) {
  UniqueFd fd(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
  if (!fd.valid()) return ErrnoStatus(errno, "cannot create a TCP socket");
  return fd;
}

}  // namespace

UniqueFd::~UniqueFd() { reset(); }

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int UniqueFd::release() { return std::exchange(fd_, -1); }

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

absl::StatusOr<SocketAddress> SocketAddress::FromLiteral(absl::string_view ip, uint16_t port) {
  const std::string text(ip);
  SocketAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage_);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage_);
  if (inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address.length_ = sizeof(sockaddr_in);
    return address;
  }
  address.storage_ = {};
  if (inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address.length_ = sizeof(sockaddr_in6);
    return address;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"", text, "\" is not a literal IPv4 or IPv6 address"));
}

SocketAddress SocketAddress::FromSockaddr(const sockaddr_storage& storage, socklen_t length) {
  SocketAddress address;
  address.storage_ = storage;
  address.length_ = length;
  return address;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

std::string SocketAddress::ip() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, text,
              sizeof(text));
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

std::string SocketAddress::ToString() const {
  if (family() == AF_INET6) return absl::StrCat("[", ip(), "]:", port());
  return absl::StrCat(ip(), ":", port());
}

bool SocketAddress::SameIp(const SocketAddress& other) const {
  if (family() != other.family()) return false;
  if (family() == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&other.storage_)->sin_addr.s_addr;
  }
  if (family() == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&other.storage_)->sin6_addr,
                       sizeof(in6_addr)) == 0;
  }
  return false;
}

absl::StatusOr<TcpSocket> TcpSocket::Listen(const SocketAddress& local, Clock& clock) {
  absl::StatusOr<UniqueFd> fd = NewSocket(local.family());
  if (!fd.ok()) return fd.status();
  if (bind(fd->get(), local.get(), local.length()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot bind ", local.ToString()));
  }
  if (listen(fd->get(), SOMAXCONN) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot listen on ", local.ToString()));
  }
  return TcpSocket(*std::move(fd), clock);
}

absl::StatusOr<TcpSocket> TcpSocket::Connect(const SocketAddress& local,
                                             const SocketAddress& remote, absl::Time deadline,
                                             Clock& clock) {
  absl::StatusOr<UniqueFd> fd = NewSocket(remote.family());
  if (!fd.ok()) return fd.status();
  if (bind(fd->get(), local.get(), local.length()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot bind ", local.ToString()));
  }
  TcpSocket socket(*std::move(fd), clock);
  if (connect(socket.fd(), remote.get(), remote.length()) != 0) {
    if (errno != EINPROGRESS) return ErrnoStatus(errno, "connect failed");
    if (absl::Status ready = socket.Wait(POLLOUT, deadline, nullptr); !ready.ok()) return ready;
    int err = 0;
    socklen_t length = sizeof(err);
    if (getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &err, &length) != 0) err = errno;
    if (err != 0) return ErrnoStatus(err, "connect failed");
  }
  return socket;
}

absl::Status NoProgressError(absl::Duration quiet) {
  absl::Status stalled = absl::DeadlineExceededError(
      absl::StrFormat("no data moved for %.1f s", absl::ToDoubleSeconds(quiet)));
  stalled.SetPayload(kNoProgressPayload, absl::Cord());
  return stalled;
}

bool IsNoProgress(const absl::Status& status) {
  return status.GetPayload(kNoProgressPayload).has_value();
}

absl::Status TcpSocket::Wait(short events, absl::Time deadline,
                             const std::atomic<bool>* stop) const {
  const absl::Time waiting_since = clock_->Now();
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      return absl::CancelledError("stopped because another stream of the test failed");
    }
    const absl::Time now = clock_->Now();
    const absl::Duration left = deadline - now;
    if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("the deadline passed");
    const absl::Duration quiet = now - waiting_since;
    if (quiet >= no_progress_limit_) return NoProgressError(quiet);
    absl::Duration slice = std::min(left, no_progress_limit_ - quiet);
    if (stop != nullptr) slice = std::min(slice, kStopCheckInterval);
    // Round up so a sub-millisecond remainder still waits instead of spinning.
    const int64_t ms = absl::ToInt64Milliseconds(slice + absl::Microseconds(999));
    pollfd entry{fd_.get(), events, 0};
    const int ready = poll(&entry, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "poll failed");
    }
    // Errors and hang-ups are reported by the call that follows.
    if (ready > 0) return absl::OkStatus();
  }
}

absl::StatusOr<TcpSocket> TcpSocket::Accept(absl::Time deadline, const std::atomic<bool>* stop) {
  for (;;) {
    const int fd = accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return TcpSocket(UniqueFd(fd), *clock_);
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoStatus(errno, "accept failed");
    if (absl::Status ready = Wait(POLLIN, deadline, stop); !ready.ok()) return ready;
  }
}

absl::Status TcpSocket::SendAll(const void* data, size_t size, absl::Time deadline,
                                const std::atomic<bool>* stop) {
  const char* next = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t sent = send(fd_.get(), next, size, MSG_NOSIGNAL);
    if (sent > 0) {
      next += sent;
      size -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return ErrnoStatus(errno, "send failed");
    }
    if (absl::Status ready = Wait(POLLOUT, deadline, stop); !ready.ok()) return ready;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> TcpSocket::ReceiveSome(void* data, size_t size, absl::Time deadline,
                                              const std::atomic<bool>* stop) {
  for (;;) {
    const ssize_t got = recv(fd_.get(), data, size, 0);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ErrnoStatus(errno, "receive failed");
    if (absl::Status ready = Wait(POLLIN, deadline, stop); !ready.ok()) return ready;
  }
}

absl::StatusOr<size_t> TcpSocket::ReceiveExact(void* data, size_t size, absl::Time deadline,
                                               const std::atomic<bool>* stop) {
  char* next = static_cast<char*>(data);
  size_t total = 0;
  while (total < size) {
    absl::StatusOr<size_t> got = ReceiveSome(next + total, size - total, deadline, stop);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    total += *got;
  }
  return total;
}

absl::Status TcpSocket::ShutdownWrite() {
  if (shutdown(fd_.get(), SHUT_WR) != 0) return ErrnoStatus(errno, "shutdown failed");
  return absl::OkStatus();
}

absl::Status TcpSocket::SetNoDelay() {
  const int on = 1;
  if (setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0) {
    return ErrnoStatus(errno, "cannot set TCP_NODELAY");
  }
  return absl::OkStatus();
}

absl::StatusOr<SocketAddress> TcpSocket::LocalAddress() const {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return ErrnoStatus(errno, "getsockname failed");
  }
  return SocketAddress::FromSockaddr(storage, length);
}

absl::StatusOr<SocketAddress> TcpSocket::PeerAddress() const {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getpeername(fd_.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    return ErrnoStatus(errno, "getpeername failed");
  }
  return SocketAddress::FromSockaddr(storage, length);
}

}  // namespace clustercert::agent::peer
