#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/unique_fd.h"

namespace clustercert::agent {

struct ConnectionGateOptions {
  // Connections accepted but not yet seen making an authorised call (the TLS
  // handshake is where a stranger stops). Each costs two descriptors here
  // (gRPC's and the gate's duplicate), so 256 take 512 of a 1,024 limit at
  // most; the controller needs one connection at a time.
  size_t max_unauthenticated = 256;
  // A connection still unauthenticated after this is closed. A TLS handshake
  // on a management network takes milliseconds; gRPC is given the same
  // bound (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS).
  absl::Duration handshake_timeout = absl::Seconds(10);
  // How long accept waits after the process ran out of descriptors, before
  // trying again (connections wait in the kernel's queue meanwhile).
  absl::Duration accept_backoff = absl::Milliseconds(100);
};

// What the gate did so far, for tests and the log.
struct ConnectionGateStats {
  uint64_t accepted = 0;
  uint64_t authenticated = 0;    // saw an authorised call
  uint64_t evicted = 0;          // closed over max_unauthenticated
  uint64_t timed_out = 0;        // closed at handshake_timeout
  uint64_t accept_failures = 0;  // accept4 failed for want of descriptors (EMFILE, ENFILE, ...)
  size_t unauthenticated = 0;    // now
};

// The agent's listening socket and accept loop, in front of gRPC.
//
// gRPC 1.51's own listener gives up for good on the first accept4 that fails
// with EMFILE (tcp_server_posix.cc logs "Failed accept4" and never re-arms
// the listener; grpc/grpc#20418), and it has no bound on connections that
// never finish their TLS handshake: about 1,100 idle TCP connections from
// anyone on the management network stopped the agent until a restart. So
// the agent accepts itself and hands each connection to gRPC through its
// external-connection acceptor, which runs the same TLS handshake and
// authorisation as a port of its own. The gate
//  - retries accept after `accept_backoff` when descriptors run out, with
//    one log line naming the cause and the limit, so it recovers by itself
//    once descriptors free up;
//  - keeps a duplicate of each new connection until a call on it passes
//    authorisation (MarkAuthenticated, from a server interceptor; the
//    duplicate lets it shut the socket down safely whatever gRPC did with its
//    descriptor), and closes it when it is still unauthenticated after
//    `handshake_timeout`, or when more than `max_unauthenticated` wait: then
//    the oldest from the source address with the most waiting goes, so a
//    flood from one address cannot push out the controller's connection.
// A connection that passed authorisation is gRPC's alone (its idle bound,
// GRPC_ARG_MAX_CONNECTION_IDLE_MS, closes it later).
class ConnectionGate {
 public:
  // Called on the gate's thread with each accepted connection; owns `fd`.
  using HandOff = std::function<void(int listener_fd, int fd)>;

  // Binds and listens on every address `host` resolves to (a literal
  // address, or a name), port `port` (0: a free one, the same for all).
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Listen(const std::string& host, int port,
                                                                ConnectionGateOptions options);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int port() const { return port_; }
  // Starts accepting on a thread of its own; call once.
  void Start(HandOff hand_off);
  // Stops accepting, closes the listeners and the duplicates, joins.
  // Idempotent.
  void Stop();

  // A call from `peer` (gRPC's peer string, "ipv4:10.0.0.1:40000" or
  // "ipv6:[fd00::1]:40000") passed authorisation: its connection no longer
  // counts as unauthenticated. Any thread.
  void MarkAuthenticated(absl::string_view peer);

  ConnectionGateStats stats() const;

 private:
  struct Waiting {
    UniqueFd duplicate;
    std::string peer;    // "address:port", the key MarkAuthenticated finds
    std::string source;  // the address alone
    absl::Time accepted;
    bool authenticated = false;
  };

  ConnectionGate(std::vector<UniqueFd> listeners, int port, ConnectionGateOptions options,
                 UniqueFd wake);
  void Run();
  void AcceptFrom(int listener);
  // False when no duplicate could be made (out of descriptors).
  bool Track(int fd, const std::string& peer, const std::string& source);
  void EvictOneLocked();
  void SweepLocked(absl::Time now);
  void DropClosedPeers(const std::vector<int>& closed);
  void StartBackoff(int err);
  void LogEvictions(absl::Time now, bool force);
  void Wake();

  const ConnectionGateOptions options_;
  const int port_;
  std::vector<UniqueFd> listeners_;
  UniqueFd wake_;  // an eventfd: Stop and MarkAuthenticated wake the poll
  HandOff hand_off_;
  std::thread thread_;

  mutable std::mutex mutex_;
  bool stopping_ = false;
  std::list<Waiting> waiting_;  // oldest first
  std::map<std::string, size_t> waiting_per_source_;
  ConnectionGateStats stats_;

  // The accept thread's own state.
  absl::Time backoff_until_ = absl::InfinitePast();
  bool backing_off_ = false;
  absl::Time backoff_started_;
  uint64_t logged_evicted_ = 0;
  uint64_t logged_timed_out_ = 0;
  absl::Time last_eviction_log_ = absl::InfinitePast();
};

// "address:port" for gRPC's peer string, as ConnectionGate keys connections
// ("ipv4:127.0.0.1:5000" and "ipv6:%5B::1%5D:5000" alike); empty when it is
// not an IP peer.
std::string PeerKey(absl::string_view grpc_peer);

}  // namespace clustercert::agent
