#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "agent/peer/peer_endpoint.h"
#include "agent/peer/verbs_options.h"
#include "clustercert/v1/peer.pb.h"
#include "common/clock.h"

namespace clustercert::agent::peer {

// Peer tests over libibverbs RC QPs, measured and reported as perftest's
// ib_{write,send,read}_{bw,lat} do (--report_gbits). The spec names the RDMA
// device, port and (RoCE) GID index, and the memory ("host" or "cuda:N").
//
// Prepare opens the device, checks the port (InfiniBand: a LID from a subnet
// manager; RoCE: a populated GID at gid_index), allocates and registers the
// buffer, creates the CQ and QPs in INIT and publishes their addresses.
// Connect binds the QPs to the peer's (path MTU = the smaller active MTU).
// Run: the client ("client", and both sides of a bidirectional bandwidth
// test) posts the operations and measures from its completions; the server
// serves (send_bw: receives and reports the receiver's figure; write/read:
// stays passive) until the client's end-of-test signal (verbs_protocol.h)
// arrives, so it returns as soon as the client is done. Bidirectional: each
// side reports the direction it sends; the pair's figure is the sum.
// Latency is the client's: one-way = RTT/2 for write and send, RTT for read.
//
// Nothing blocks past the Connect/Run deadline: the CQ is polled. A failed
// completion is Unavailable naming the QP and the status; an overrun is
// DeadlineExceeded. Destroy an endpoint only after Run has returned.
// Deadlines are read against the engine's clock (the agent passes
// RealClock()).
class VerbsEngine : public PeerEngine {
 public:
  // On the wall clock, for tools and tests that keep no other.
  VerbsEngine() : VerbsEngine(RealClock()) {}
  // `clock` must outlive the engine and its endpoints.
  explicit VerbsEngine(Clock& clock) : clock_(clock) {}

  absl::StatusOr<std::unique_ptr<PeerEndpoint>> Prepare(const v1::PeerTestSpec& spec) override;

 private:
  Clock& clock_;
};

}  // namespace clustercert::agent::peer
