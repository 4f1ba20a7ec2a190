#include "agent/peer/tcp_streams.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

namespace clustercert::agent::peer {
namespace {

constexpr size_t kPageBytes = 4096;

void PutBig(uint8_t* out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(value & 0xff);
    value >>= 8;
  }
}

uint64_t GetBig(const uint8_t* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

bool SendPlanDone(const SendPlan& plan, uint64_t messages) {
  if (plan.duration > absl::ZeroDuration()) {
    return absl::FromChrono(SteadyClock::now() - plan.start) >= plan.duration;
  }
  return messages >= plan.iterations;
}

// The sender's end of a forward stream: shut down writing, then read the
// receiver's byte count and check it against what was sent.
absl::Status ConfirmSent(TcpSocket& socket, absl::Time deadline, const std::atomic<bool>& stop,
                         StreamTally& tally) {
  if (absl::Status shut = socket.ShutdownWrite(); !shut.ok()) return shut;
  std::array<uint8_t, 8> count{};
  absl::StatusOr<size_t> got = socket.ReceiveExact(count.data(), count.size(), deadline, &stop);
  if (!got.ok()) return got.status();
  if (*got != count.size()) {
    return absl::UnavailableError(absl::StrCat(
        "the receiver closed the stream without confirming the ", tally.bytes, " bytes sent"));
  }
  tally.last = SteadyClock::now();
  const uint64_t received = GetBig(count.data(), 8);
  if (received != tally.bytes) {
    return absl::DataLossError(
        absl::StrCat("the receiver counted ", received, " bytes, ", tally.bytes, " were sent"));
  }
  return absl::OkStatus();
}

}  // namespace

const char* StreamKindName(StreamKind kind) {
  switch (kind) {
    case StreamKind::kForward:
      return "forward";
    case StreamKind::kReverse:
      return "reverse";
    case StreamKind::kPingPong:
      return "ping-pong";
  }
  return "unknown";
}

std::array<uint8_t, StreamHeader::kSize> StreamHeader::Encode() const {
  std::array<uint8_t, kSize> bytes{};
  PutBig(&bytes[0], kMagic, 4);
  bytes[4] = kVersion;
  bytes[5] = static_cast<uint8_t>(kind);
  PutBig(&bytes[6], index, 2);
  PutBig(&bytes[8], count, 2);
  bytes[10] = 0;  // reserved
  bytes[11] = bidirectional ? 1 : 0;
  PutBig(&bytes[12], message_bytes, 4);
  return bytes;
}

absl::StatusOr<StreamHeader> StreamHeader::Decode(const std::array<uint8_t, kSize>& bytes) {
  if (GetBig(&bytes[0], 4) != kMagic) {
    return absl::InvalidArgumentError("the connection did not start with a clustercert header");
  }
  if (bytes[4] != kVersion) {
    return absl::InvalidArgumentError(absl::StrCat("the peer speaks tcp-engine protocol version ",
                                                   bytes[4], ", this agent speaks ", kVersion));
  }
  if (bytes[5] > static_cast<uint8_t>(StreamKind::kPingPong)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown stream kind ", bytes[5]));
  }
  StreamHeader header;
  header.kind = static_cast<StreamKind>(bytes[5]);
  header.index = static_cast<uint16_t>(GetBig(&bytes[6], 2));
  header.count = static_cast<uint16_t>(GetBig(&bytes[8], 2));
  header.message_bytes = static_cast<uint32_t>(GetBig(&bytes[12], 4));
  header.bidirectional = (bytes[11] & 1) != 0;
  return header;
}

void AlignedBuffer::Free::operator()(char* p) const { std::free(p); }

absl::StatusOr<AlignedBuffer> AlignedBuffer::Allocate(size_t size) {
  const size_t rounded = (std::max<size_t>(size, 1) + kPageBytes - 1) / kPageBytes * kPageBytes;
  AlignedBuffer buffer;
  buffer.data_.reset(static_cast<char*>(std::aligned_alloc(kPageBytes, rounded)));
  if (buffer.data_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate a ", rounded, "-byte message buffer"));
  }
  // A pattern rather than zeros, so nothing along the path can elide it.
  for (size_t i = 0; i < rounded; ++i) buffer.data_.get()[i] = static_cast<char>(i * 131 + 7);
  buffer.size_ = size;
  return buffer;
}

absl::StatusOr<StreamTally> SendStream(TcpSocket& socket, const AlignedBuffer& message,
                                       const SendPlan& plan, absl::Time deadline,
                                       const std::atomic<bool>& stop,
                                       std::atomic<uint64_t>* moved) {
  StreamTally tally;
  tally.first = plan.start;
  while (!SendPlanDone(plan, tally.messages)) {
    if (absl::Status sent = socket.SendAll(message.data(), plan.message_bytes, deadline, &stop);
        !sent.ok()) {
      return sent;
    }
    tally.bytes += plan.message_bytes;
    if (moved != nullptr) moved->fetch_add(plan.message_bytes, std::memory_order_relaxed);
    ++tally.messages;
  }
  if (absl::Status confirmed = ConfirmSent(socket, deadline, stop, tally); !confirmed.ok()) {
    return confirmed;
  }
  return tally;
}

absl::StatusOr<StreamTally> ReceiveStream(TcpSocket& socket, const AlignedBuffer& scratch,
                                          absl::Time deadline, const std::atomic<bool>& stop,
                                          std::atomic<uint64_t>* moved) {
  StreamTally tally;
  for (;;) {
    absl::StatusOr<size_t> got =
        socket.ReceiveSome(scratch.data(), scratch.size(), deadline, &stop);
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    if (tally.bytes == 0) tally.first = SteadyClock::now();
    tally.bytes += *got;
    if (moved != nullptr) moved->fetch_add(*got, std::memory_order_relaxed);
  }
  tally.last = SteadyClock::now();
  if (tally.bytes == 0) tally.first = tally.last;
  std::array<uint8_t, 8> count{};
  PutBig(count.data(), tally.bytes, 8);
  if (absl::Status sent = socket.SendAll(count.data(), count.size(), deadline, &stop); !sent.ok()) {
    return sent;
  }
  return tally;
}

namespace {

constexpr absl::Duration kPollSlice = absl::Milliseconds(50);

// Waits for `events` on the sockets still in play, at most one poll slice.
// Returns the pollfd array's revents per socket index (0 when not polled).
// `last_moved`: when any of the streams last moved data, for the sockets'
// no-progress limit (TcpSocket::set_no_progress_limit), which they share, as
// they share the clock both are judged on.
absl::StatusOr<std::vector<short>> PollSockets(const std::vector<TcpSocket*>& sockets,
                                               const std::vector<bool>& active, short events,
                                               absl::Time deadline, const std::atomic<bool>& stop,
                                               absl::Time last_moved) {
  if (stop.load()) return absl::AbortedError("stopped: another stream of this test failed");
  const absl::Time now = sockets.front()->clock().Now();
  if (now >= deadline) return absl::DeadlineExceededError("the test ran out of time");
  if (now - last_moved >= sockets.front()->no_progress_limit()) {
    return NoProgressError(now - last_moved);
  }
  std::vector<pollfd> fds;
  std::vector<size_t> index;
  for (size_t i = 0; i < sockets.size(); ++i) {
    if (!active[i]) continue;
    fds.push_back({sockets[i]->fd(), events, 0});
    index.push_back(i);
  }
  const int timeout_ms =
      static_cast<int>(absl::ToInt64Milliseconds(std::min(kPollSlice, deadline - now))) + 1;
  const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  if (ready < 0 && errno != EINTR) {
    return absl::UnavailableError(absl::StrCat("poll failed: ", std::strerror(errno)));
  }
  std::vector<short> revents(sockets.size(), 0);
  for (size_t k = 0; k < fds.size(); ++k) revents[index[k]] = ready > 0 ? fds[k].revents : 0;
  return revents;
}

// One round of SendStreams' and ReceiveStreams' loops: PollSockets, and on
// failure `failed` names the stream to blame, the last one still in play.
absl::StatusOr<std::vector<short>> PollRound(const std::vector<TcpSocket*>& sockets,
                                             const std::vector<bool>& active, short events,
                                             absl::Time deadline, const std::atomic<bool>& stop,
                                             absl::Time last_moved, size_t* failed) {
  absl::StatusOr<std::vector<short>> ready =
      PollSockets(sockets, active, events, deadline, stop, last_moved);
  if (!ready.ok()) {
    *failed = 0;
    for (size_t i = 0; i < sockets.size(); ++i) {
      if (active[i]) *failed = i;
    }
  }
  return ready;
}

absl::Status SocketError(const char* what) {
  const int error = errno;
  std::string message = absl::StrCat(what, ": ", std::strerror(error));
  if (error == ECONNRESET || error == EPIPE) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::Status SendStreams(const std::vector<TcpSocket*>& sockets, const AlignedBuffer& message,
                         const SendPlan& plan, absl::Time deadline, const std::atomic<bool>& stop,
                         std::atomic<uint64_t>* moved, std::vector<StreamTally>* tallies,
                         size_t* failed) {
  const size_t n = sockets.size();
  tallies->assign(n, StreamTally{});
  std::vector<size_t> offset(n, 0);  // bytes of the current message already sent
  std::vector<bool> active(n, true);
  for (auto& tally : *tallies) tally.first = plan.start;
  size_t remaining = n;
  if (n == 0) return absl::OkStatus();
  Clock& clock = sockets.front()->clock();
  absl::Time last_moved = clock.Now();
  while (remaining > 0) {
    // A stream stops at a message boundary once the plan is done.
    for (size_t i = 0; i < n; ++i) {
      if (active[i] && offset[i] == 0 && SendPlanDone(plan, (*tallies)[i].messages)) {
        active[i] = false;
        --remaining;
      }
    }
    if (remaining == 0) break;
    auto ready = PollRound(sockets, active, POLLOUT, deadline, stop, last_moved, failed);
    if (!ready.ok()) return ready.status();
    for (size_t i = 0; i < n; ++i) {
      if (!active[i] || (*ready)[i] == 0) continue;
      const ssize_t sent = ::send(sockets[i]->fd(), message.data() + offset[i],
                                  plan.message_bytes - offset[i], MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        *failed = i;
        return SocketError("send failed");
      }
      offset[i] += static_cast<size_t>(sent);
      last_moved = clock.Now();
      if (offset[i] == plan.message_bytes) {
        offset[i] = 0;
        (*tallies)[i].bytes += plan.message_bytes;
        ++(*tallies)[i].messages;
        if (moved != nullptr) moved->fetch_add(plan.message_bytes, std::memory_order_relaxed);
      }
    }
  }
  // Every stream confirms what its receiver counted, as SendStream does.
  for (size_t i = 0; i < n; ++i) {
    *failed = i;
    if (absl::Status confirmed = ConfirmSent(*sockets[i], deadline, stop, (*tallies)[i]);
        !confirmed.ok()) {
      return confirmed;
    }
  }
  return absl::OkStatus();
}

absl::Status ReceiveStreams(const std::vector<TcpSocket*>& sockets, const AlignedBuffer& scratch,
                            absl::Time deadline, const std::atomic<bool>& stop,
                            std::atomic<uint64_t>* moved, std::vector<StreamTally>* tallies,
                            size_t* failed) {
  const size_t n = sockets.size();
  tallies->assign(n, StreamTally{});
  std::vector<bool> active(n, true);
  size_t remaining = n;
  if (n == 0) return absl::OkStatus();
  Clock& clock = sockets.front()->clock();
  absl::Time last_moved = clock.Now();
  while (remaining > 0) {
    auto ready = PollRound(sockets, active, POLLIN, deadline, stop, last_moved, failed);
    if (!ready.ok()) return ready.status();
    for (size_t i = 0; i < n; ++i) {
      if (!active[i] || (*ready)[i] == 0) continue;
      StreamTally& tally = (*tallies)[i];
      const ssize_t got = ::recv(sockets[i]->fd(), scratch.data(), scratch.size(), MSG_DONTWAIT);
      if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        *failed = i;
        return SocketError("receive failed");
      }
      if (got > 0) {
        last_moved = clock.Now();
        if (tally.bytes == 0) tally.first = SteadyClock::now();
        tally.bytes += static_cast<uint64_t>(got);
        if (moved != nullptr)
          moved->fetch_add(static_cast<uint64_t>(got), std::memory_order_relaxed);
        continue;
      }
      // End of stream: confirm the count, as ReceiveStream does.
      tally.last = SteadyClock::now();
      if (tally.bytes == 0) tally.first = tally.last;
      std::array<uint8_t, 8> count{};
      PutBig(count.data(), tally.bytes, 8);
      if (absl::Status sent = sockets[i]->SendAll(count.data(), count.size(), deadline, &stop);
          !sent.ok()) {
        *failed = i;
        return sent;
      }
      active[i] = false;
      --remaining;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> EchoStream(TcpSocket& socket, const AlignedBuffer& scratch,
                                    uint64_t message_bytes, absl::Time deadline,
                                    const std::atomic<bool>& stop) {
  uint64_t echoed = 0;
  for (;;) {
    absl::StatusOr<size_t> got =
        socket.ReceiveExact(scratch.data(), message_bytes, deadline, &stop);
    if (!got.ok()) return got.status();
    if (*got == 0) return echoed;
    if (*got != message_bytes) {
      return absl::UnavailableError(absl::StrCat("the stream ended inside message ", echoed + 1,
                                                 " (", *got, " of ", message_bytes, " bytes)"));
    }
    if (absl::Status sent = socket.SendAll(scratch.data(), message_bytes, deadline, &stop);
        !sent.ok()) {
      return sent;
    }
    ++echoed;
  }
}

absl::StatusOr<std::vector<double>> PingPongStream(TcpSocket& socket, const AlignedBuffer& message,
                                                   const AlignedBuffer& scratch,
                                                   const SendPlan& plan, size_t max_samples,
                                                   absl::Time deadline,
                                                   const std::atomic<bool>& stop) {
  std::vector<double> rtt_us;
  if (plan.duration == absl::ZeroDuration())
    rtt_us.reserve(std::min<uint64_t>(plan.iterations, max_samples));
  while (rtt_us.size() < max_samples && !SendPlanDone(plan, rtt_us.size())) {
    const SteadyClock::time_point sent_at = SteadyClock::now();
    if (absl::Status sent = socket.SendAll(message.data(), plan.message_bytes, deadline, &stop);
        !sent.ok()) {
      return sent;
    }
    absl::StatusOr<size_t> got =
        socket.ReceiveExact(scratch.data(), plan.message_bytes, deadline, &stop);
    if (!got.ok()) return got.status();
    if (*got != plan.message_bytes) {
      return absl::UnavailableError(absl::StrCat("the echo of message ", rtt_us.size() + 1,
                                                 " stopped after ", *got, " of ",
                                                 plan.message_bytes, " bytes"));
    }
    rtt_us.push_back(
        std::chrono::duration<double, std::micro>(SteadyClock::now() - sent_at).count());
  }
  if (absl::Status shut = socket.ShutdownWrite(); !shut.ok()) return shut;
  return rtt_us;
}

absl::Status RunInParallel(std::vector<std::function<absl::Status()>> tasks,
                           std::atomic<bool>& stop) {
  std::mutex mutex;
  absl::Status first_failure;
  {
    std::vector<std::jthread> threads;
    threads.reserve(tasks.size());
    for (std::function<absl::Status()>& task : tasks) {
      threads.emplace_back([&, task = std::move(task)] {
        absl::Status status = task();
        if (status.ok()) return;
        std::lock_guard<std::mutex> lock(mutex);
        if (first_failure.ok()) {
          first_failure = std::move(status);
          stop.store(true);
        }
      });
    }
  }  // jthreads join here
  return first_failure;
}

}  // namespace clustercert::agent::peer
