#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace clustercert::agent::peer {

// An owned file descriptor: closed exactly once, when the owner goes away.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A literal IPv4/IPv6 address and a port, in the form bind() and connect()
// take. Never resolves names: the data plane is addressed by literal IPs.
class SocketAddress {
 public:
  // `ip` is a literal address without brackets ("10.0.0.2", "fd00::2").
  static absl::StatusOr<SocketAddress> FromLiteral(absl::string_view ip, uint16_t port);
  static SocketAddress FromSockaddr(const sockaddr_storage& storage, socklen_t length);

  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  std::string ip() const;
  // "10.0.0.2:40123" or "[fd00::2]:40123".
  std::string ToString() const;
  bool SameIp(const SocketAddress& other) const;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// A non-blocking TCP socket whose every wait is a poll() bounded by a
// deadline and cut short, within kStopCheckInterval, when `stop` turns true
// (another stream of the same test failed). Deadlines and the no-progress
// limit are judged on the Clock the socket was made with (accepted sockets
// take their listener's), so a test can move time past them; poll() itself
// still waits on the kernel's clock, in slices no longer than the time left
// on that Clock. Error codes:
// Unavailable when the peer refused, reset or closed the connection,
// DeadlineExceeded at the deadline, Cancelled on stop, Internal otherwise.
// Messages are clauses ("Connection reset by peer") for the caller to place
// in a sentence naming the peer and the stream.
class TcpSocket {
 public:
  static constexpr absl::Duration kStopCheckInterval = absl::Milliseconds(50);

  // A listening socket on `local` (port 0 picks a free port).
  static absl::StatusOr<TcpSocket> Listen(const SocketAddress& local, Clock& clock);
  // Binds to `local` (port 0) so traffic leaves from that data-plane
  // address, then connects to `remote` before `deadline`.
  static absl::StatusOr<TcpSocket> Connect(const SocketAddress& local, const SocketAddress& remote,
                                           absl::Time deadline, Clock& clock);

  TcpSocket() = default;
  TcpSocket(TcpSocket&&) noexcept = default;
  TcpSocket& operator=(TcpSocket&&) noexcept = default;

  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  // The clock its deadlines are judged on; valid sockets only.
  Clock& clock() const { return *clock_; }

  // On a listening socket: the next connection, before `deadline`.
  absl::StatusOr<TcpSocket> Accept(absl::Time deadline, const std::atomic<bool>* stop);

  // Sends all `size` bytes.
  absl::Status SendAll(const void* data, size_t size, absl::Time deadline,
                       const std::atomic<bool>* stop);
  // Receives between 1 and `size` bytes; 0 means the peer shut down its side
  // (orderly end of stream).
  absl::StatusOr<size_t> ReceiveSome(void* data, size_t size, absl::Time deadline,
                                     const std::atomic<bool>* stop);
  // Receives exactly `size` bytes unless the stream ends first; returns the
  // count received (less than `size` only at end of stream).
  absl::StatusOr<size_t> ReceiveExact(void* data, size_t size, absl::Time deadline,
                                      const std::atomic<bool>* stop);

  // A wait for data to move (send, receive) that lasts `limit` ends the call
  // with DeadlineExceeded marked IsNoProgress: the peer or the link stalled.
  // Waits are where a socket cannot move data, so this bounds the time a
  // stream may move nothing. Unset: only the deadline bounds a wait.
  void set_no_progress_limit(absl::Duration limit) { no_progress_limit_ = limit; }
  absl::Duration no_progress_limit() const { return no_progress_limit_; }

  absl::Status ShutdownWrite();
  absl::Status SetNoDelay();

  absl::StatusOr<SocketAddress> LocalAddress() const;
  absl::StatusOr<SocketAddress> PeerAddress() const;

 private:
  TcpSocket(UniqueFd fd, Clock& clock) : fd_(std::move(fd)), clock_(&clock) {}
  // Waits for `events` on the socket; OK when ready.
  absl::Status Wait(short events, absl::Time deadline, const std::atomic<bool>* stop) const;

  UniqueFd fd_;
  Clock* clock_ = nullptr;  // set on every valid socket
  absl::Duration no_progress_limit_ = absl::InfiniteDuration();
};

// The status of a wait that the no-progress limit ended: DeadlineExceeded
// "no data moved for 10.0 s", marked so IsNoProgress tells it from the deadline.
absl::Status NoProgressError(absl::Duration quiet);
bool IsNoProgress(const absl::Status& status);

}  // namespace clustercert::agent::peer
