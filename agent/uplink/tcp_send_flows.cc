#include "agent/uplink/tcp_send_flows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_acked (glibc's lacks it)
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/errno_text.h"
#include "common/printable.h"
#include "common/uplink_target.h"

namespace clustercert::agent::uplink {
namespace {

// One buffer, sent over and over by every flow: big enough that the syscall
// cost vanishes, small enough to stay in cache.
constexpr size_t kSendBufferBytes = size_t{256} * 1024;
// Sends in a row on one flow before its worker serves the next one.
constexpr int kSendBurst = 16;
// The connect bound when the caller gives no deadline: nothing may hang.
constexpr absl::Duration kConnectTimeout = absl::Seconds(10);
// How often a worker looks at the clock and at the other workers' failures.
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);
// After the duration, how long the flows wait for the peer to acknowledge
// what is still in flight (a round trip or two on any real path).
constexpr absl::Duration kAckDrain = absl::Milliseconds(250);
constexpr absl::Duration kAckDrainStep = absl::Milliseconds(5);
// A flow whose acknowledgements stood still for this share of the duration
// while sent bytes waited is a target that does not read (or a dead path):
// a reading sink keeps acknowledging, whatever its speed.
constexpr double kStalledShare = 0.5;

// An owned socket, closed exactly once.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_;
};

int PollMs(absl::Duration left) {
  const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return static_cast<int>(std::clamp<int64_t>(ms, 0, int64_t{1} << 30));
}

// A literal address and port in the form connect() and bind() take.
struct Endpoint {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string ip;    // "10.0.0.9", "fd00::9"
  std::string text;  // "10.0.0.9:5201", "[fd00::9]:5201"

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

std::optional<Endpoint> FromLiteral(const std::string& ip, uint16_t port) {
  Endpoint endpoint;
  endpoint.ip = ip;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&endpoint.storage);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    endpoint.length = sizeof(sockaddr_in);
    endpoint.text = absl::StrCat(ip, ":", port);
    return endpoint;
  }
  endpoint.storage = {};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&endpoint.storage);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    endpoint.length = sizeof(sockaddr_in6);
    endpoint.text = absl::StrCat("[", ip, "]:", port);
    return endpoint;
  }
  return std::nullopt;
}

// The target as a socket address, by ParseUplinkTcpAddress's rules and then
// CheckDestination's (this host's broadcast addresses).
absl::StatusOr<Endpoint> ParseTarget(absl::string_view host_port) {
  auto refused = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("uplink tcp target \"", PrintableText(host_port, 128), "\" is refused: ", why,
                     "; give a literal IP address and port (10.0.0.9:5201 or [fd00::9]:5201) in "
                     "uplink.targets[].address"));
  };
  absl::StatusOr<HostPort> parsed = ParseUplinkTcpAddress(host_port);
  if (!parsed.ok()) return refused(parsed.status().message());
  std::optional<Endpoint> endpoint = FromLiteral(parsed->host, static_cast<uint16_t>(parsed->port));
  if (!endpoint) return refused("the address does not parse");
  if (absl::Status allowed = CheckDestination(endpoint->get()); !allowed.ok()) {
    return refused(allowed.message());
  }
  return *std::move(endpoint);
}

// One connection: what it wrote and what the peer acknowledged. The
// acknowledged bytes are the figure: send() returns once the bytes are in
// this host's socket buffer, so a sink that accepts and never reads still
// takes megabytes of writes at memory speed (issue 34: 14-56 Gb/s
// "measured" in 0.0006 s). The peer's kernel acknowledges only what fits in
// its receive buffer, which empties only as the sink reads.
struct TcpFlow {
  Fd fd;
  std::string what;  // "tcp flow 2 of 8 to 10.0.0.9:5201"
  bool connected = false;
  uint64_t written = 0;                // bytes send() took
  uint64_t acked_base = 0;             // tcpi_bytes_acked before the first send (the SYN may count)
  uint64_t acked = 0;                  // acknowledged since then
  SteadyClock::time_point first{};     // just before the first send
  SteadyClock::time_point acked_at{};  // when `acked` last grew; `first` until it does
};

// The peer's acknowledged bytes on `fd` (TCP_INFO's tcpi_bytes_acked, Linux
// 4.1+); nullopt when the kernel does not report them.
std::optional<uint64_t> BytesAcked(int fd) {
  tcp_info info{};
  socklen_t length = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return std::nullopt;
  // An older kernel fills a shorter struct and says so in `length`.
  if (length < offsetof(tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked)) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(info.tcpi_bytes_acked);
}

// Reads the flow's acknowledged bytes; notes `now` when they grew and adds
// the growth to `moved`.
void SampleAcks(TcpFlow& flow, SteadyClock::time_point now, std::atomic<uint64_t>* moved) {
  const std::optional<uint64_t> total = BytesAcked(flow.fd.get());
  if (!total || *total < flow.acked_base) return;
  const uint64_t acked = std::min(*total - flow.acked_base, flow.written);
  if (acked <= flow.acked) return;
  if (moved != nullptr) moved->fetch_add(acked - flow.acked, std::memory_order_relaxed);
  flow.acked = acked;
  flow.acked_at = now;
}

absl::Status ConnectError(const TcpFlow& flow, const Endpoint& remote, int err) {
  const std::string failed = absl::StrCat(flow.what, " could not connect (", ErrnoText(err), ")");
  if (err == ECONNREFUSED) {
    const uint16_t port =
        ntohs(remote.family() == AF_INET
                  ? reinterpret_cast<const sockaddr_in*>(&remote.storage)->sin_port
                  : reinterpret_cast<const sockaddr_in6*>(&remote.storage)->sin6_port);
    return absl::UnavailableError(absl::StrCat(failed, ": nothing listens on ", remote.text,
                                               "; start the sink (e.g. `nc -lk ", port,
                                               " > /dev/null`) or fix uplink.targets[].address"));
  }
  if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
    return absl::ResourceExhaustedError(absl::StrCat(
        failed, ": the agent is out of sockets; raise its open-file limit or use fewer flows"));
  }
  return absl::UnavailableError(
      absl::StrCat(failed, ": check the routes and firewall between this node and ", remote.text));
}

// Opens every flow's connection, all at once, before `deadline`.
absl::Status ConnectAll(std::vector<TcpFlow>& flows, const Endpoint& remote,
                        const std::optional<Endpoint>& local, absl::Time deadline,
                        absl::Duration allowed) {
  for (TcpFlow& flow : flows) {
    flow.fd = Fd(socket(remote.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    if (!flow.fd.valid()) return ConnectError(flow, remote, errno);
    // Port 0: the kernel picks the port, the address picks the data network.
    if (local && bind(flow.fd.get(), local->get(), local->length) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flow.what, " could not bind its local side to ", local->ip, " (",
                       ErrnoText(errno), "): bind_ip must be an address configured on this node"));
    }
    if (connect(flow.fd.get(), remote.get(), remote.length) == 0) {
      flow.connected = true;
    } else if (errno != EINPROGRESS) {
      return ConnectError(flow, remote, errno);
    }
  }
  for (;;) {
    std::vector<pollfd> pending;
    std::vector<TcpFlow*> owners;
    for (TcpFlow& flow : flows) {
      if (flow.connected) continue;
      pending.push_back({flow.fd.get(), POLLOUT, 0});
      owners.push_back(&flow);
    }
    if (pending.empty()) return absl::OkStatus();
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat(
          owners.front()->what, " did not connect within ",
          absl::FormatDuration(absl::Trunc(allowed, absl::Milliseconds(1))), ": check that ",
          remote.text, " is reachable from this node (routes, firewall) and that the sink accepts ",
          flows.size(), " connections, or give the step a longer deadline"));
    }
    const int ready = poll(pending.data(), pending.size(), PollMs(std::min(left, kPollSlice)));
    if (ready < 0 && errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("poll failed while connecting to ", remote.text, ": ", ErrnoText(errno)));
    }
    for (size_t i = 0; ready > 0 && i < pending.size(); ++i) {
      if (pending[i].revents == 0) continue;
      int err = 0;
      socklen_t length = sizeof(err);
      if (getsockopt(pending[i].fd, SOL_SOCKET, SO_ERROR, &err, &length) != 0) err = errno;
      if (err != 0) return ConnectError(*owners[i], remote, err);
      owners[i]->connected = true;
    }
  }
}

// Sends on `flows` until `end`, reading each flow's acknowledged bytes as it
// goes. Returns early (OK) when `stop` turns true because another worker
// failed.
absl::Status SendWorker(const std::vector<TcpFlow*>& flows, const std::vector<char>& buffer,
                        SteadyClock::time_point end, std::atomic<uint64_t>* moved,
                        const std::atomic<bool>& stop) {
  std::vector<pollfd> entries;
  entries.reserve(flows.size());
  for (TcpFlow* flow : flows) entries.push_back({flow->fd.get(), POLLOUT, 0});
  while (!stop.load(std::memory_order_relaxed)) {
    const absl::Duration left = absl::FromChrono(end - SteadyClock::now());
    if (left <= absl::ZeroDuration()) return absl::OkStatus();
    const int ready = poll(entries.data(), entries.size(), PollMs(std::min(left, kPollSlice)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll failed while sending: ", ErrnoText(errno)));
    }
    for (size_t i = 0; ready > 0 && i < entries.size(); ++i) {
      if (entries[i].revents == 0) continue;
      TcpFlow& flow = *flows[i];
      // Errors and hang-ups show in the send that follows.
      for (int burst = 0; burst < kSendBurst; ++burst) {
        const SteadyClock::time_point before = SteadyClock::now();
        const ssize_t sent = send(flow.fd.get(), buffer.data(), buffer.size(), MSG_NOSIGNAL);
        if (sent < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          return absl::UnavailableError(
              absl::StrCat(flow.what, " was cut after ", flow.written, " bytes (", ErrnoText(errno),
                           "): check that the sink is still running and reads every connection"));
        }
        if (flow.written == 0) flow.first = flow.acked_at = before;
        flow.written += static_cast<uint64_t>(sent);
        if (SteadyClock::now() >= end) break;
      }
    }
    const SteadyClock::time_point now = SteadyClock::now();
    for (TcpFlow* flow : flows) SampleAcks(*flow, now, moved);
  }
  return absl::OkStatus();
}

// After the duration: waits (at most kAckDrain, and never past `deadline`)
// for the peer to acknowledge what is in flight, so the last round trip's
// bytes count, and the time they took with them.
void DrainAcks(std::vector<TcpFlow>& flows, absl::Time deadline, std::atomic<uint64_t>* moved) {
  const absl::Time until = std::min(absl::Now() + kAckDrain, deadline);
  for (;;) {
    bool waiting = false;
    const SteadyClock::time_point now = SteadyClock::now();
    for (TcpFlow& flow : flows) {
      SampleAcks(flow, now, moved);
      waiting = waiting || flow.acked < flow.written;
    }
    if (!waiting || absl::Now() >= until) return;
    absl::SleepFor(kAckDrainStep);
  }
}

// FailedPrecondition when a flow's acknowledgements stood still for
// kStalledShare of the duration with bytes unacknowledged: the target took
// the connection but does not read it. `end` is when the run stopped waiting.
absl::Status CheckTheTargetRead(const std::vector<TcpFlow>& flows, const Endpoint& remote,
                                absl::Duration duration, SteadyClock::time_point end) {
  const TcpFlow* stalled = nullptr;
  size_t stalled_count = 0;
  SteadyClock::time_point earliest = end;
  uint64_t acked = 0;
  for (const TcpFlow& flow : flows) {
    acked += flow.acked;
    if (flow.written == 0) continue;
    earliest = std::min(earliest, flow.first);
    const absl::Duration still = absl::FromChrono(end - flow.acked_at);
    if (flow.acked < flow.written && still >= duration * kStalledShare) {
      ++stalled_count;
      if (stalled == nullptr) stalled = &flow;
    }
  }
  if (stalled == nullptr) return absl::OkStatus();
  const double seconds = std::chrono::duration<double>(end - earliest).count();
  const double stood = std::chrono::duration<double>(end - stalled->acked_at).count();
  const uint16_t port =
      ntohs(remote.family() == AF_INET
                ? reinterpret_cast<const sockaddr_in*>(&remote.storage)->sin_port
                : reinterpret_cast<const sockaddr_in6*>(&remote.storage)->sin6_port);
  // A sink that serves one connection at a time (OpenBSD's `nc -lk`) reads
  // one flow of N and leaves the others waiting.
  const std::string some_read =
      stalled_count < flows.size()
          ? absl::StrCat(" (", flows.size() - stalled_count, " of ", flows.size(),
                         " flows were read: a sink that serves one connection at a time, such as "
                         "OpenBSD's `nc -lk`, reads only one)")
          : std::string();
  return absl::FailedPreconditionError(absl::StrCat(
      "the target read ", acked, " bytes in ", absl::StrFormat("%.3g", seconds),
      " s: ", stalled->what, " had ", stalled->written - stalled->acked,
      " bytes unacknowledged and no acknowledgement for the last ", absl::StrFormat("%.3g", stood),
      " s, so ", remote.text,
      " accepts connections but does not read them (or the path stopped carrying data)", some_read,
      "; run a sink that reads and discards every connection at once (e.g. `socat -u "
      "TCP-LISTEN:",
      port, ",fork,reuseaddr /dev/null`, or `nc -lk ", port,
      " > /dev/null` for one flow) or fix uplink.targets[].address"));
}

}  // namespace

absl::StatusOr<FlowsResult> RunTcpSendFlows(const std::string& host_port, const FlowSpec& spec,
                                            std::atomic<uint64_t>* moved) {
  if (absl::Status valid = ValidateFlowSpec(spec, host_port); !valid.ok()) return valid;
  absl::StatusOr<Endpoint> remote = ParseTarget(host_port);
  if (!remote.ok()) return remote.status();
  std::optional<Endpoint> local;
  if (!spec.bind_ip.empty()) {
    local = FromLiteral(spec.bind_ip, 0);  // ValidateFlowSpec checked it is a literal
    if (!local || local->family() != remote->family()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "uplink tcp target ", remote->text, " and bind_ip ", spec.bind_ip,
          " are of different address families: give an IPv4 bind_ip for an IPv4 target and "
          "an IPv6 one for an IPv6 target"));
    }
  }
  const std::string what =
      absl::StrCat("uplink tcp send to ", remote->text, " with ", spec.flows, " flows");
  const absl::Time now = absl::Now();
  if (absl::Status fits = CheckDurationFits(spec, now, what); !fits.ok()) return fits;

  std::vector<TcpFlow> flows(static_cast<size_t>(spec.flows));
  for (int i = 0; i < spec.flows; ++i) {
    flows[i].what = absl::StrCat("tcp flow ", i + 1, " of ", spec.flows, " to ", remote->text);
  }
  // Connecting must leave the whole duration before the deadline.
  const absl::Time connect_deadline =
      std::min(spec.deadline - spec.duration, now + kConnectTimeout);
  if (absl::Status connected =
          ConnectAll(flows, *remote, local, connect_deadline, connect_deadline - now);
      !connected.ok()) {
    return connected;
  }

  if (absl::Status fits = CheckDurationFits(spec, absl::Now(), what); !fits.ok()) return fits;
  const SteadyClock::time_point end = SteadyClock::now() + absl::ToChronoNanoseconds(spec.duration);
  const std::vector<char> buffer(kSendBufferBytes, '\x5a');
  // What the peer acknowledged before the first byte (the SYN counts on some
  // kernels) is not throughput.
  for (TcpFlow& flow : flows) {
    const std::optional<uint64_t> base = BytesAcked(flow.fd.get());
    if (!base) {
      return absl::FailedPreconditionError(absl::StrCat(
          "this kernel does not report the bytes a TCP peer acknowledged (TCP_INFO "
          "tcpi_bytes_acked, Linux 4.1 and later), so ",
          what, " cannot count what the target received: run the agent on a newer kernel"));
    }
    flow.acked_base = *base;
  }
  std::vector<TcpFlow*> running;
  for (TcpFlow& flow : flows) running.push_back(&flow);
  std::atomic<bool> stop{false};
  absl::Status failure = RunOnWorkers(running, stop, [&](const std::vector<TcpFlow*>& share) {
    return SendWorker(share, buffer, end, moved, stop);
  });
  if (!failure.ok()) return failure;
  DrainAcks(flows, spec.deadline, moved);
  if (absl::Status read = CheckTheTargetRead(flows, *remote, spec.duration, SteadyClock::now());
      !read.ok()) {
    return read;
  }

  // Each flow's figure: what the peer acknowledged, over its first send to
  // the acknowledgement that completed it.
  FlowsResult result;
  std::vector<FlowWindow> windows;
  for (const TcpFlow& flow : flows) {
    result.flows.push_back({flow.acked, 0, 1});
    windows.push_back({flow.first, flow.acked_at});
  }
  Summarise(result, windows);
  result.detail =
      absl::StrCat("tcp, ", spec.flows, spec.flows == 1 ? " flow to " : " flows to ", remote->text);
  if (local) absl::StrAppend(&result.detail, " from ", spec.bind_ip);
  absl::StrAppend(&result.detail, ", counting the bytes the target acknowledged");
  // Closing here (with `flows`) lets the kernel deliver what is still queued.
  return result;
}

}  // namespace clustercert::agent::uplink
