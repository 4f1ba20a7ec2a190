#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/memory_provider.h"
#include "agent/peer/peer_endpoint.h"
#include "agent/peer/run_progress.h"
#include "agent/peer/verbs_datapath.h"
#include "agent/peer/verbs_options.h"
#include "agent/peer/verbs_resources.h"
#include "clustercert/v1/peer.pb.h"
#include "common/clock.h"

namespace clustercert::agent::peer {

// One side of a verbs peer test: the buffer, the device context, the PD, the
// MR over the buffer, one CQ and `streams` RC QPs, made in rc_pingpong's order
// by Create and destroyed in reverse when the endpoint is. Create leaves the
// QPs in INIT and publishes {lid, qpn[], psn[], gid, rkey, vaddr, active_mtu,
// link_layer}; Connect posts this side's receives and moves every QP through
// RTR to RTS against the peer's info; Run runs the test once (verbs_datapath.h).
// Connect and Run are single-use and must be called in that order.
// Connect's and Run's deadlines are read against `clock` (which must outlive
// the endpoint); the data path's busy-poll loops then run on the steady
// clock, to the time that was left on it when Run began.
class VerbsEndpoint : public PeerEndpoint {
 public:
  static absl::StatusOr<std::unique_ptr<VerbsEndpoint>> Create(VerbsTestOptions options,
                                                               Clock& clock);

  const v1::EndpointInfo& local_info() const override { return local_; }
  absl::Status Connect(const v1::EndpointInfo& peer, absl::Time deadline) override;
  absl::StatusOr<v1::PeerTestResult> Run(absl::Time deadline) override;
  // Bandwidth tests count bytes as they complete (a one-sided server sees none).
  v1::PeerTestProgress Progress() const override { return progress_.Snapshot(); }
  v1::PathMtu path_mtu() const override { return path_mtu_; }
  void Cancel() override { cancelled_.store(true, std::memory_order_relaxed); }

 private:
  // Member order is construction order; C++ destroys in reverse, so QPs go
  // before the CQ, the MR before the PD, everything before the context and
  // the buffer last (its MR must be gone first).
  struct Resources {
    std::unique_ptr<MemoryProvider> provider;
    std::unique_ptr<Buffer> buffer;
    Context context;
    ProtectionDomain pd;
    MemoryRegion mr;
    CompletionQueue cq;
    std::vector<QueuePair> qps;
  };
  enum class State { kPrepared, kConnected, kUsed };

  VerbsEndpoint(VerbsTestOptions options, Resources resources, v1::EndpointInfo local,
                uint8_t reads_in_flight, Clock& clock);
  DataPath MakePath() const;

  VerbsTestOptions options_;
  Clock& clock_;
  Resources resources_;
  v1::EndpointInfo local_;
  uint8_t reads_in_flight_ = 1;
  uint32_t path_mtu_bytes_ = 0;
  v1::PathMtu path_mtu_;  // the QP's and the route's, recorded at Connect
  v1::EndpointInfo peer_;
  State state_ = State::kPrepared;
  RunProgress progress_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace clustercert::agent::peer
