#include "agent/service/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/errno_text.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent {
namespace {

// A summary of closed connections at most this often: a flood must not
// become a flood of log lines.
constexpr absl::Duration kEvictionLogPeriod = absl::Seconds(10);

// "1.2.3.4" or "fd00::1" for a socket address; a v4-mapped IPv6 address
// reads as the IPv4 one, as gRPC prints it.
std::string AddressText(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
      ::inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof(text));
    } else {
      ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof(text));
    }
  }
  return text;
}

int PortOf(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
  }
  return 0;
}

// The address in canonical text (inet_pton then inet_ntop), v4-mapped as
// IPv4; empty when `text` is no address.
std::string CanonicalAddress(const std::string& text) {
  sockaddr_storage address{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(address);
  auto& v6 = reinterpret_cast<sockaddr_in6&>(address);
  if (::inet_pton(AF_INET, text.c_str(), &v4.sin_addr) == 1) {
    address.ss_family = AF_INET;
  } else if (::inet_pton(AF_INET6, text.c_str(), &v6.sin6_addr) == 1) {
    address.ss_family = AF_INET6;
  } else {
    return "";
  }
  return AddressText(address);
}

uint64_t OpenFileSoftLimit() {
  rlimit limit{};
  return ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 0;
}

}  // namespace

std::string PeerKey(absl::string_view grpc_peer) {
  std::string text(grpc_peer);
  if (absl::StartsWith(text, "ipv4:") || absl::StartsWith(text, "ipv6:")) {
    text = text.substr(5);
  } else {
    return "";
  }
  text = absl::StrReplaceAll(text, {{"%5B", "["}, {"%5D", "]"}, {"%5b", "["}, {"%5d", "]"}});
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return "";
  std::string host = text.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port)) return "";
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string address = CanonicalAddress(host);
  if (address.empty()) return "";
  return absl::StrCat(address, ":", port);
}

namespace {

// Binds and listens on every address `host` resolves to; what could not be
// bound is skipped (as gRPC does), its error kept in `last_error`.
absl::StatusOr<std::vector<UniqueFd>> BindEvery(const std::string& host, int port,
                                                std::string* last_error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int failed = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      failed != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", host, ":", port, ": ", ::gai_strerror(failed),
                     "; give an address this host owns, e.g. its management-plane IP"));
  }
  std::vector<UniqueFd> listeners;
  for (addrinfo* at = found; at != nullptr; at = at->ai_next) {
    UniqueFd fd(::socket(at->ai_family, at->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      *last_error = ErrnoText(errno);
      continue;
    }
    const int one = 1;
    const int zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // The IPv6 wildcard takes IPv4 callers too (v4-mapped), whatever
    // net.ipv6.bindv6only says.
    if (at->ai_family == AF_INET6) {
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    sockaddr_storage address{};
    std::memcpy(&address, at->ai_addr, at->ai_addrlen);
    // Port 0: every address gets the port the first one was given.
    if (port == 0 && !listeners.empty()) {
      sockaddr_storage first{};
      socklen_t length = sizeof(first);
      ::getsockname(listeners.front().get(), reinterpret_cast<sockaddr*>(&first), &length);
      const uint16_t chosen = htons(static_cast<uint16_t>(PortOf(first)));
      if (address.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(address).sin_port = chosen;
      if (address.ss_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6&>(address).sin6_port = chosen;
      }
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), at->ai_addrlen) != 0 ||
        ::listen(fd.get(), SOMAXCONN) != 0) {
      *last_error = ErrnoText(errno);
      continue;
    }
    listeners.push_back(std::move(fd));
  }
  ::freeaddrinfo(found);
  return listeners;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Listen(
    const std::string& host, int port, ConnectionGateOptions options) {
  const std::string where = absl::StrCat(host, ":", port);
  std::string last_error;
  // gRPC's own listener took "0.0.0.0" for the dual-stack wildcard [::], so
  // an agent told 0.0.0.0 answered IPv6 callers too; it still does, and
  // falls back to IPv4 alone on a host without IPv6.
  absl::StatusOr<std::vector<UniqueFd>> made(std::vector<UniqueFd>{});
  if (host == "0.0.0.0") made = BindEvery("::", port, &last_error);
  if (!made.ok() || made->empty()) made = BindEvery(host, port, &last_error);
  if (!made.ok()) return made.status();
  std::vector<UniqueFd> listeners = *std::move(made);
  if (listeners.empty()) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", where, ": ", last_error,
        "; the address is in use or not on this host: pick a free port or an address this "
        "host owns"));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  ::getsockname(listeners.front().get(), reinterpret_cast<sockaddr*>(&bound), &length);
  UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot listen on ", where, ": eventfd: ", ErrnoText(errno)));
  }
  return std::unique_ptr<ConnectionGate>(
      new ConnectionGate(std::move(listeners), PortOf(bound), options, std::move(wake)));
}

ConnectionGate::ConnectionGate(std::vector<UniqueFd> listeners, int port,
                               ConnectionGateOptions options, UniqueFd wake)
    : options_(options), port_(port), listeners_(std::move(listeners)), wake_(std::move(wake)) {}

ConnectionGate::~ConnectionGate() { Stop(); }

void ConnectionGate::Start(HandOff hand_off) {
  hand_off_ = std::move(hand_off);
  thread_ = std::thread([this] { Run(); });
}

void ConnectionGate::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  listeners_.clear();
  waiting_.clear();
  waiting_per_source_.clear();
}

void ConnectionGate::Wake() {
  const uint64_t one = 1;
  if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof(one));
}

void ConnectionGate::MarkAuthenticated(absl::string_view peer) {
  const std::string key = PeerKey(peer);
  if (key.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Waiting& waiting : waiting_) {
    if (waiting.peer != key || waiting.authenticated) continue;
    waiting.authenticated = true;
    ++stats_.authenticated;
    Wake();  // the gate's thread closes the duplicate
    return;
  }
}

ConnectionGateStats ConnectionGate::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ConnectionGateStats stats = stats_;
  stats.unauthenticated = 0;
  for (const Waiting& waiting : waiting_) stats.unauthenticated += !waiting.authenticated;
  return stats;
}

void ConnectionGate::Run() {
  std::vector<pollfd> polled;
  std::vector<int> closed;
  for (;;) {
    const absl::Time now = absl::Now();
    absl::Duration timeout = absl::Seconds(1);
    polled.clear();
    polled.push_back({wake_.get(), POLLIN, 0});
    const bool accepting = now >= backoff_until_;
    if (accepting) {
      for (const UniqueFd& listener : listeners_) polled.push_back({listener.get(), POLLIN, 0});
    } else {
      timeout = std::min(timeout, backoff_until_ - now);
    }
    const size_t first_duplicate = polled.size();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      SweepLocked(now);
      // A peer that hung up frees its place at once (POLLRDHUP: the
      // duplicate alone keeps the socket open once gRPC closed its own).
      for (const Waiting& waiting : waiting_) {
        polled.push_back({waiting.duplicate.get(), POLLRDHUP, 0});
      }
      if (!waiting_.empty()) {
        timeout = std::min(timeout, waiting_.front().accepted + options_.handshake_timeout - now);
      }
    }
    LogEvictions(now, false);
    const int wait_ms =
        static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout) + 1));
    const int ready = ::poll(polled.data(), polled.size(), wait_ms);
    if (ready < 0 && errno != EINTR) {
      StartBackoff(errno);  // ENOMEM: try again after the backoff
      continue;
    }
    if (ready <= 0) continue;
    if (polled[0].revents != 0) {
      uint64_t count = 0;
      (void)!::read(wake_.get(), &count, sizeof(count));
    }
    closed.clear();
    for (size_t i = first_duplicate; i < polled.size(); ++i) {
      if (polled[i].revents != 0) closed.push_back(polled[i].fd);
    }
    DropClosedPeers(closed);
    if (accepting) {
      for (size_t i = 1; i < first_duplicate; ++i) {
        if (polled[i].revents != 0) AcceptFrom(polled[i].fd);
      }
    }
  }
}

void ConnectionGate::DropClosedPeers(const std::vector<int>& closed) {
  if (closed.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (std::find(closed.begin(), closed.end(), it->duplicate.get()) == closed.end()) {
      ++it;
      continue;
    }
    if (--waiting_per_source_[it->source] == 0) waiting_per_source_.erase(it->source);
    it = waiting_.erase(it);
  }
}

void ConnectionGate::AcceptFrom(int listener) {
  // Drains the kernel's queue: each pass either hands a connection to gRPC
  // or ends on EAGAIN, a failure to back off from, or the stop.
  for (int taken = 0; taken < 4096; ++taken) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&address), &length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) break;
      if (err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM) continue;
      StartBackoff(err);  // EMFILE, ENFILE, ENOBUFS, ENOMEM
      return;
    }
    // What gRPC's own listener sets on its connections: small messages
    // (the controller's calls) go out at once.
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    const bool tracked =
        Track(fd, absl::StrCat(AddressText(address), ":", PortOf(address)), AddressText(address));
    hand_off_(listener, fd);
    if (!tracked) {
      // No descriptor for the duplicate: gRPC's own handshake timeout still
      // bounds this one; accepting pauses until descriptors free up.
      StartBackoff(EMFILE);
      return;
    }
    if (backing_off_) {
      backing_off_ = false;
      spdlog::info("accepting connections on port {} again, after {}", port_,
                   absl::FormatDuration(absl::Now() - backoff_started_));
    }
  }
}

bool ConnectionGate::Track(int fd, const std::string& peer, const std::string& source) {
  UniqueFd duplicate(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.accepted;
  if (!duplicate.valid()) return false;
  size_t unauthenticated = 0;
  for (const Waiting& waiting : waiting_) unauthenticated += !waiting.authenticated;
  if (unauthenticated >= options_.max_unauthenticated) EvictOneLocked();
  ++waiting_per_source_[source];
  waiting_.push_back({std::move(duplicate), peer, source, absl::Now(), false});
  return true;
}

void ConnectionGate::EvictOneLocked() {
  // The oldest connection from the source with the most waiting.
  std::map<std::string, size_t> unauthenticated;
  for (const Waiting& waiting : waiting_) unauthenticated[waiting.source] += !waiting.authenticated;
  auto busiest = std::max_element(unauthenticated.begin(), unauthenticated.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  if (busiest == unauthenticated.end()) return;
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->authenticated || it->source != busiest->first) continue;
    ::shutdown(it->duplicate.get(), SHUT_RDWR);  // gRPC reads EOF and closes its side
    if (--waiting_per_source_[it->source] == 0) waiting_per_source_.erase(it->source);
    waiting_.erase(it);
    ++stats_.evicted;
    return;
  }
}

void ConnectionGate::SweepLocked(absl::Time now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const bool expired = now - it->accepted >= options_.handshake_timeout;
    if (!it->authenticated && !expired) {
      ++it;
      continue;
    }
    if (!it->authenticated) {
      ::shutdown(it->duplicate.get(), SHUT_RDWR);
      ++stats_.timed_out;
    }
    if (--waiting_per_source_[it->source] == 0) waiting_per_source_.erase(it->source);
    it = waiting_.erase(it);
  }
}

void ConnectionGate::StartBackoff(int err) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.accept_failures;
  }
  backoff_until_ = absl::Now() + options_.accept_backoff;
  if (backing_off_) return;
  backing_off_ = true;
  backoff_started_ = absl::Now();
  spdlog::error(
      "cannot accept connections on port {}: {} (the open-file limit is {}): retrying every {} "
      "while they wait in the kernel's queue; raise LimitNOFILE in the unit if this repeats",
      port_, ErrnoText(err), OpenFileSoftLimit(), absl::FormatDuration(options_.accept_backoff));
}

void ConnectionGate::LogEvictions(absl::Time now, bool force) {
  uint64_t evicted = 0;
  uint64_t timed_out = 0;
  std::string busiest;
  size_t busiest_count = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    evicted = stats_.evicted;
    timed_out = stats_.timed_out;
    for (const auto& [source, count] : waiting_per_source_) {
      if (count > busiest_count) {
        busiest = source;
        busiest_count = count;
      }
    }
  }
  if (evicted == logged_evicted_ && timed_out == logged_timed_out_) return;
  if (!force && now - last_eviction_log_ < kEvictionLogPeriod) return;
  spdlog::warn(
      "closed {} connections over the cap of {} not yet authenticated and {} that did not "
      "authenticate within {}{}",
      evicted - logged_evicted_, options_.max_unauthenticated, timed_out - logged_timed_out_,
      absl::FormatDuration(options_.handshake_timeout),
      busiest.empty()
          ? std::string()
          : absl::StrCat(" (most waiting now: ", busiest_count, " from ", busiest, ")"));
  logged_evicted_ = evicted;
  logged_timed_out_ = timed_out;
  last_eviction_log_ = now;
}

}  // namespace clustercert::agent
