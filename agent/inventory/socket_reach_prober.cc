#include "agent/inventory/socket_reach_prober.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/errno_text.h"
#include "common/unique_fd.h"

namespace clustercert::agent::inventory {
namespace {

ReachOutcome OutcomeOfErrno(int err) {
  ReachOutcome outcome;
  outcome.detail = ErrnoText(err);
  switch (err) {
    case 0:
      outcome.kind = ReachOutcome::kConnected;
      outcome.detail.clear();
      break;
    case ECONNREFUSED:
      outcome.kind = ReachOutcome::kRefused;
      break;
    case ENETUNREACH:
    case EHOSTUNREACH:
    case EADDRNOTAVAIL:
      outcome.kind = ReachOutcome::kUnreachable;
      break;
    case ETIMEDOUT:
      outcome.kind = ReachOutcome::kTimeout;
      break;
    default:
      outcome.kind = ReachOutcome::kError;
  }
  return outcome;
}

// Starts one connect; the socket when it is in flight, or its outcome.
UniqueFd StartConnect(const ReachAttempt& attempt, ReachOutcome& outcome, bool& done) {
  done = true;
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, attempt.address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(attempt.port));
    length = sizeof(*v4);
  } else if (::inet_pton(AF_INET6, attempt.address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(attempt.port));
    length = sizeof(*v6);
  } else {
    outcome = ReachOutcome{ReachOutcome::kError, "not a literal IP address", {}};
    return UniqueFd();
  }
  UniqueFd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    outcome = OutcomeOfErrno(errno);
    outcome.kind = ReachOutcome::kError;
    return fd;
  }
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, attempt.netdev.c_str(),
                   static_cast<socklen_t>(attempt.netdev.size())) != 0) {
    outcome = OutcomeOfErrno(errno);
    outcome.kind = ReachOutcome::kError;
    outcome.detail = "cannot bind to " + attempt.netdev + ": " + outcome.detail;
    return UniqueFd();
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), length) == 0) {
    outcome = OutcomeOfErrno(0);
    return UniqueFd();
  }
  if (errno != EINPROGRESS) {
    outcome = OutcomeOfErrno(errno);
    return UniqueFd();
  }
  done = false;
  return fd;
}

}  // namespace

std::vector<ReachOutcome> SocketReachProber::Probe(const std::vector<ReachAttempt>& attempts,
                                                   absl::Duration timeout) {
  const absl::Time start = clock_.Now();
  const absl::Time deadline = start + timeout;
  std::vector<ReachOutcome> outcomes(attempts.size());
  std::vector<UniqueFd> sockets(attempts.size());
  std::vector<bool> pending(attempts.size(), false);
  for (size_t i = 0; i < attempts.size(); ++i) {
    bool done = true;
    sockets[i] = StartConnect(attempts[i], outcomes[i], done);
    pending[i] = !done;
    if (done) outcomes[i].took = clock_.Now() - start;
  }
  while (true) {
    std::vector<pollfd> polled;
    std::vector<size_t> index;
    for (size_t i = 0; i < attempts.size(); ++i) {
      if (!pending[i]) continue;
      polled.push_back(pollfd{sockets[i].get(), POLLOUT, 0});
      index.push_back(i);
    }
    const absl::Duration left = deadline - clock_.Now();
    if (polled.empty() || left <= absl::ZeroDuration()) break;
    int ready =
        ::poll(polled.data(), polled.size(), static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno != EINTR) break;
    for (size_t k = 0; k < polled.size(); ++k) {
      if (polled[k].revents == 0) continue;
      int err = 0;
      socklen_t size = sizeof(err);
      ::getsockopt(polled[k].fd, SOL_SOCKET, SO_ERROR, &err, &size);
      const size_t i = index[k];
      outcomes[i] = OutcomeOfErrno(err);
      outcomes[i].took = clock_.Now() - start;
      pending[i] = false;
    }
  }
  for (size_t i = 0; i < attempts.size(); ++i) {
    if (!pending[i]) continue;
    outcomes[i] = ReachOutcome{ReachOutcome::kTimeout, "no answer", timeout};
  }
  return outcomes;
}

}  // namespace clustercert::agent::inventory
