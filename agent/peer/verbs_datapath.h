#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/peer/verbs_options.h"
#include "agent/peer/verbs_protocol.h"
#include "clustercert/v1/peer.pb.h"

// The verbs engine's data path: posting work requests and polling the CQ for
// a connected endpoint, and the bandwidth and latency loops over them. A
// DataPath only borrows the endpoint's objects; the endpoint owns them and
// outlives the run. Every wait polls (no completion channel) and checks the
// run's deadline, so nothing blocks past it.
namespace clustercert::peer {

struct DataPath {
  using Clock = std::chrono::steady_clock;

  const VerbsTestOptions* options = nullptr;
  std::string device;  // for messages
  ibv_cq* cq = nullptr;
  std::vector<ibv_qp*> qps;
  uint32_t lkey = 0;
  uint64_t local_address = 0;   // this side's buffer (the send region starts here)
  uint8_t* host = nullptr;      // the same buffer when the CPU may touch it, else nullptr
  uint64_t remote_address = 0;  // the peer's buffer
  uint32_t rkey = 0;
  uint32_t max_inline = 0;
  std::atomic<uint64_t>* bytes = nullptr;  // live progress: bytes sent or received so far
  Clock::time_point started;               // the run's start, for "after 1.2 s"
  Clock::time_point deadline;              // the run's deadline on the steady clock

  uint64_t receive_offset() const { return ReceiveOffset(options->message_bytes); }

  // Posts message `count` (1-based) of the test's operation on QP `qp`.
  absl::Status PostData(size_t qp, uint64_t count, bool signaled) const;
  // Posts the end-of-test signal, signaled, after `count` data work requests.
  absl::Status PostEnd(size_t qp, uint64_t count, EndReason reason) const;
  // Posts one receive into the receive region.
  absl::Status PostReceive(size_t qp) const;
  // Up to `max` completions into `wcs`; the number found, or Internal.
  absl::StatusOr<int> Poll(ibv_wc* wcs, int max) const;
  // Unavailable naming the QP and status of a failed completion.
  absl::Status Failure(const ibv_wc& wc) const;
  // DeadlineExceeded: "... reached its deadline after 1.2 s while <doing>".
  absl::Status Overrun(const std::string& doing) const;
};

// Both expect a connected endpoint whose receives (ReceiveDepth) are posted.
absl::StatusOr<v1::PeerTestResult> RunBandwidth(const DataPath& path);
absl::StatusOr<v1::PeerTestResult> RunLatency(const DataPath& path);

}  // namespace clustercert::peer
