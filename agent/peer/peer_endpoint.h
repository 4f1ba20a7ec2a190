#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/peer.pb.h"

namespace clustercert::agent::peer {

// One side of a peer test, owning every resource it made (sockets, buffers,
// QPs, MRs) until it is destroyed. The controller drives both sides through
// the same steps: Prepare (the engine) -> local_info() to the peer ->
// Connect(peer's info) -> Run on both sides at once -> destroy.
class PeerEndpoint {
 public:
  virtual ~PeerEndpoint() = default;

  // What the peer needs to reach this endpoint.
  virtual const v1::EndpointInfo& local_info() const = 0;

  // Binds this endpoint to the peer. Must not block past `deadline`.
  virtual absl::Status Connect(const v1::EndpointInfo& peer, absl::Time deadline) = 0;

  // What Connect measured of the path MTU toward the peer (mtu.path), kept
  // by the controller for a run that fails and so returns no result. Engines
  // that measure nothing return the default (no figure).
  virtual v1::PathMtu path_mtu() const { return {}; }

  // Runs the test: the client measures, the server serves (and, where it
  // sees the data, measures too). Returns by `deadline` whatever happens;
  // an overrun is DeadlineExceeded, never a hang.
  virtual absl::StatusOr<v1::PeerTestResult> Run(absl::Time deadline) = 0;

  // How far a running test has got, callable from another thread while Run
  // runs. Engines that cannot tell return the default (running = false).
  virtual v1::PeerTestProgress Progress() const { return {}; }

  // Ends a running Run early (callable from another thread): Run returns
  // Cancelled within its next check, well under a second. The controller
  // closes the surviving end of a pair when the other end fails: a verbs
  // endpoint cannot learn that its peer's QP went to error and would poll
  // until its deadline. TCP needs nothing here: the failed end's sockets
  // close, and the survivor's next read or write fails at once.
  virtual void Cancel() {}
};

// Makes endpoints of one engine (verbs, tcp). Rejects a spec it cannot honour
// (unknown test, size or duration out of bounds) with InvalidArgument naming
// the field, the value and the allowed range.
class PeerEngine {
 public:
  virtual ~PeerEngine() = default;
  virtual absl::StatusOr<std::unique_ptr<PeerEndpoint>> Prepare(const v1::PeerTestSpec& spec) = 0;
};

}  // namespace clustercert::agent::peer
