#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/peer/verbs_options.h"
#include "agent/peer/verbs_protocol.h"
#include "clustercert/v1/peer.pb.h"

// The verbs engine's data path: posting work requests and polling the CQ for
// a connected endpoint, and the bandwidth and latency loops over them. A
// DataPath only borrows the endpoint's objects; the endpoint owns them and
// outlives the run. Every wait polls (no completion channel) and checks the
// run's deadline, so nothing blocks past it.
namespace clustercert::agent::peer {

// What the engine saw of one QP when its run stalled (ibv_query_qp).
struct QpView {
  uint32_t qpn = 0;
  std::string state;  // "RTS", "ERR", ...
  uint32_t path_mtu_bytes = 0;
  uint32_t sq_psn = 0;
  uint32_t rq_psn = 0;
  uint32_t dest_qpn = 0;
  uint32_t timeout = 0;
  uint32_t retry_cnt = 0;
  uint32_t rnr_retry = 0;
  uint32_t sgid_index = 0;
};

// A port's hw_counters (/sys/class/infiniband/DEV/ports/N/hw_counters) by name.
using PortCounterMap = std::map<std::string, uint64_t>;

// Everything a stall message reports: each QP, and this port's retransmit and
// NAK counters at the run's start and now. The errors say why a part is missing.
struct StallView {
  std::vector<QpView> qps;
  std::vector<std::string> qp_errors;
  PortCounterMap before;
  PortCounterMap after;
  std::string counters_error;
};

// "; what the engine saw: rxe0 QP 0x11 state RTS, mtu 4096, sq_psn 0x..., ...;
// rxe0 port 1 counters over the run: rcvd_seq_err +0, ..." (empty view: "").
std::string FormatStall(const std::string& device, uint32_t port, const StallView& view);

// Reads what FormatStall reports. The live probe asks the device
// (ibv_query_qp) and sysfs (through SysfsView); tests give their own.
class StallProbe {
 public:
  virtual ~StallProbe() = default;
  virtual absl::StatusOr<QpView> QueryQp(ibv_qp* qp) const = 0;
  virtual absl::StatusOr<PortCounterMap> ReadCounters(const std::string& device,
                                                      uint32_t port) const = 0;
};
const StallProbe& LiveStallProbe();

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
  // Set from another thread when the controller stops the run (its peer's
  // side failed first: an RC peer whose QP went to error never sends again,
  // and this side would otherwise poll until its deadline). nullptr: never.
  const std::atomic<bool>* cancelled = nullptr;
  // Reads the QPs and the port's counters for a stall's message; nullptr:
  // the message says only what the loop knows.
  const StallProbe* probe = nullptr;

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
  // True when the run must end now: past its deadline, or cancelled.
  bool MustStop() const { return MustStop(Clock::now()); }
  bool MustStop(Clock::time_point now) const;
  // Why it must: Cancelled ("... was stopped by the controller after 1.2 s
  // while <doing> ...", then what the probe sees against `before`) or
  // Overrun(doing).
  absl::Status Stopped(const std::string& doing, const PortCounterMap& before = {}) const;
  // DeadlineExceeded: "... moved no data for 10.0 s ... while <doing>", then
  // what the probe sees now against `before` (the port's counters at the start).
  absl::Status NoProgress(const std::string& doing, Clock::duration quiet,
                          const PortCounterMap& before = {}) const;
  // The port's counters now (empty without a probe or when unreadable).
  PortCounterMap Counters() const;
  // The QPs and counters now, for a message.
  StallView Observe(const PortCounterMap& before) const;
};

// Ends a run that stopped moving data (a link dropping past RC's retries, a
// peer that froze) after options.no_progress instead of at its deadline,
// which is duration_s plus the controller's margin. Only a side that sees its
// data move judges: a sender by its completions, a receiver of sends by its
// receives, a ping-pong by its echoes; the target of writes or reads sees
// nothing until the end signal and relies on the controller closing it once
// the active side failed. A QP that goes to error needs no watch: its posted
// receives and requests flush with the error status, which the loops poll.
class ProgressWatch {
 public:
  ProgressWatch(const DataPath& path, bool sees_progress, DataPath::Clock::time_point start)
      : path_(path),
        sees_progress_(sees_progress),
        limit_(absl::ToChronoNanoseconds(path.options->no_progress)),
        last_moved_(start),
        before_(path.Counters()) {}

  void Moved(DataPath::Clock::time_point now) { last_moved_ = now; }

  // OK while the run may go on; otherwise why it ends now (stopped, past its
  // deadline, or no progress). `doing()` names the wait, built only then.
  template <typename Doing>
  absl::Status Check(DataPath::Clock::time_point now, Doing doing) const {
    if (path_.MustStop(now)) return path_.Stopped(doing(), before_);
    if (sees_progress_ && now - last_moved_ >= limit_) {
      return path_.NoProgress(doing(), now - last_moved_, before_);
    }
    return absl::OkStatus();
  }

 private:
  const DataPath& path_;
  const bool sees_progress_;
  const DataPath::Clock::duration limit_;
  DataPath::Clock::time_point last_moved_;
  const PortCounterMap before_;  // the port's counters at the start, for a stall's message
};

// Both expect a connected endpoint whose receives (ReceiveDepth) are posted.
absl::StatusOr<v1::PeerTestResult> RunBandwidth(const DataPath& path);
absl::StatusOr<v1::PeerTestResult> RunLatency(const DataPath& path);

}  // namespace clustercert::agent::peer
