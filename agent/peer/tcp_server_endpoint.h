#pragma once

#include <memory>
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

// The passive side of a tcp peer test. Create listens on data_ip (port 0) and
// publishes {address, tcp_port}; Connect records the client's address, the
// only one whose connections Run accepts; Run accepts the client's streams
// (dropping strays: other sources, missing or foreign headers), then
// receives and measures (bandwidth; also sends the reverse half when
// bidirectional) or echoes (latency). Sockets close when Run returns.
class TcpServerEndpoint : public PeerEndpoint {
 public:
  // Deadlines and the no-progress limit are judged on `clock`, which must
  // outlive the endpoint.
  static absl::StatusOr<std::unique_ptr<TcpServerEndpoint>> Create(TcpTestOptions options,
                                                                   Clock& clock);

  const v1::EndpointInfo& local_info() const override { return info_; }
  absl::Status Connect(const v1::EndpointInfo& peer, absl::Time deadline) override;
  absl::StatusOr<v1::PeerTestResult> Run(absl::Time deadline) override;
  v1::PeerTestProgress Progress() const override { return progress_.Snapshot(); }
  v1::PathMtu path_mtu() const override { return path_mtu_; }

 private:
  TcpServerEndpoint(TcpTestOptions options, SocketAddress local, TcpSocket listener, Clock& clock);

  absl::Status AcceptStreams(absl::Time deadline, SteadyClock::time_point run_start);
  absl::StatusOr<v1::PeerTestResult> RunBandwidth(absl::Time deadline,
                                                  SteadyClock::time_point run_start);
  absl::StatusOr<v1::PeerTestResult> RunEcho(absl::Time deadline,
                                             SteadyClock::time_point run_start);

  TcpTestOptions options_;
  Clock& clock_;
  RunProgress progress_;  // bytes this side moved on the forward streams
  SocketAddress local_;
  TcpSocket listener_;
  v1::EndpointInfo info_;
  std::optional<SocketAddress> client_;
  v1::PathMtu path_mtu_;  // toward the client, probed at Connect
  bool ran_ = false;
  std::vector<std::optional<Stream>> forward_;
  std::vector<std::optional<Stream>> reverse_;
  std::optional<Stream> ping_pong_;
};

}  // namespace clustercert::agent::peer
