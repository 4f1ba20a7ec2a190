#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/peer_endpoint.h"
#include "agent/peer/run_progress.h"
#include "agent/peer/tcp_engine.h"
#include "agent/peer/tcp_results.h"
#include "agent/peer/tcp_socket.h"
#include "agent/peer/tcp_streams.h"
#include "common/clock.h"

namespace clustercert::agent::peer {

// The measuring side of a tcp peer test. Construction touches no network;
// Connect opens the streams from data_ip to the server and sends each one's
// header; Run sends (one thread per stream) or ping-pongs, then returns the
// sender-side bandwidth, the receiver side of server->client when
// bidirectional, or the latency. Sockets close when Run returns.
class TcpClientEndpoint : public PeerEndpoint {
 public:
  // `local` is data_ip with port 0. Deadlines and the no-progress limit are
  // judged on `clock`, which must outlive the endpoint.
  TcpClientEndpoint(TcpTestOptions options, SocketAddress local, Clock& clock);

  const v1::EndpointInfo& local_info() const override { return info_; }
  absl::Status Connect(const v1::EndpointInfo& peer, absl::Time deadline) override;
  absl::StatusOr<v1::PeerTestResult> Run(absl::Time deadline) override;
  v1::PeerTestProgress Progress() const override { return progress_.Snapshot(); }
  v1::PathMtu path_mtu() const override { return path_mtu_; }

 private:
  // Opens every stream of the test; Connect closes them all if one fails.
  absl::Status OpenAll(const SocketAddress& server, absl::Time deadline);
  absl::StatusOr<Stream> Open(const SocketAddress& server, StreamKind kind, size_t index,
                              size_t count, absl::Time deadline);
  absl::StatusOr<v1::PeerTestResult> RunBandwidth(absl::Time deadline,
                                                  SteadyClock::time_point run_start);
  absl::StatusOr<v1::PeerTestResult> RunPingPong(absl::Time deadline,
                                                 SteadyClock::time_point run_start);

  TcpTestOptions options_;
  Clock& clock_;
  RunProgress progress_;  // bytes this side moved on the forward streams
  SocketAddress local_;
  v1::EndpointInfo info_;
  bool connected_ = false;
  v1::PathMtu path_mtu_;  // toward the server, probed at Connect
  bool ran_ = false;
  std::vector<Stream> forward_;
  std::vector<Stream> reverse_;
  std::optional<Stream> ping_pong_;
};

}  // namespace clustercert::agent::peer
