// The bandwidth loop (write_bw, send_bw, read_bw), perftest's run_iter_bw in
// shape: each sending QP keeps tx_depth work requests in flight, signaling one
// in SignalEvery(tx_depth); a signaled completion frees every earlier request
// of its QP (an RC send queue completes in order). Each QP ends with the
// end-of-test signal (verbs_protocol.h). One CQ serves every QP, sends and
// receives alike; each polled batch is stamped once.

#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/peer/verbs_datapath.h"
#include "common/perf_stats.h"

namespace clustercert::agent::peer {
namespace {

using Clock = DataPath::Clock;

constexpr int kPollBatch = 32;
// A side with nothing to post and no data to receive only waits for the end
// signal, as perftest's write_bw/read_bw server sleeps on its socket: it
// naps 1 ms between empty polls, so it leaves the CPU to the driver that
// places the peer's writes (rdma_rxe answers from the same CPU; under TCG a
// 50 us nap's timer wakeups took a visible share of an emulated core). The
// end signal is seen at most 1 ms late, outside the sender's figure.
constexpr auto kPassiveNap = std::chrono::milliseconds(1);
// A sender or receiver on a stalled link naps this long between empty polls.
constexpr auto kStallNap = std::chrono::microseconds(50);
// A side that has seen no completion for this long is on a stalled link
// (drops, go-back-N retransmits): it polls with naps from then on, so its
// spinning does not take the CPU the retransmits need. Found in the soft-RoCE
// lab, where two stalled VMs starved the healthy pairs of the same round.
constexpr auto kStallBeforeNap = std::chrono::milliseconds(10);

struct QpState {
  uint64_t posted = 0;     // data work requests posted
  uint64_t completed = 0;  // data work requests known complete
  bool end_posted = false;
  bool end_done = false;
  bool peer_ended = false;
  uint64_t received = 0;  // send_bw: data messages received
};

class BandwidthRun {
 public:
  explicit BandwidthRun(const DataPath& path)
      : path_(path),
        options_(*path.options),
        qps_(path.qps.size()),
        sending_(options_.sends()),
        expects_end_(options_.server || options_.bidirectional),
        receives_data_(expects_end_ && options_.operation == VerbsTestOptions::Operation::kSend),
        depth_(options_.tx_depth()),
        every_(SignalEvery(depth_)),
        per_qp_(options_.duration_mode() ? 0 : options_.iterations),
        peak_(uint64_t{depth_} * path.qps.size()),
        watch_(path, sending_ || receives_data_, Clock::now()) {}

  absl::StatusOr<v1::PeerTestResult> Run();

 private:
  absl::Status PostSends(bool stop);
  absl::Status Handle(const ibv_wc& wc, Clock::time_point now);
  absl::Status CheckReceived() const;
  bool Done() const;
  // Best effort on the way out: tell the peer the test is over, so a passive
  // side does not wait for its own deadline.
  void AbortSends();
  std::string Waiting() const;

  const DataPath& path_;
  const VerbsTestOptions& options_;
  std::vector<QpState> qps_;
  const bool sending_;
  const bool expects_end_;
  const bool receives_data_;
  const uint32_t depth_;
  const uint32_t every_;
  const uint64_t per_qp_;  // 0: duration mode

  PeakTracker peak_;
  ProgressWatch watch_;
  Clock::time_point first_post_;
  Clock::time_point last_completion_;
  uint64_t completed_ = 0;
  uint64_t received_ = 0;
  std::optional<Clock::time_point> first_receive_;
  Clock::time_point last_receive_;
};

absl::Status BandwidthRun::PostSends(bool stop) {
  for (size_t q = 0; q < qps_.size(); ++q) {
    QpState& qp = qps_[q];
    if (qp.end_posted) continue;
    while (!stop && (per_qp_ == 0 || qp.posted < per_qp_) && qp.posted - qp.completed < depth_) {
      if (absl::Status posted =
              path_.PostData(q, qp.posted + 1, IsSignaled(qp.posted, every_, per_qp_));
          !posted.ok()) {
        return posted;
      }
      ++qp.posted;
    }
    // The send queue holds tx_depth + 1, so the end signal always fits.
    if (stop || (per_qp_ != 0 && qp.posted == per_qp_)) {
      if (absl::Status ended = path_.PostEnd(q, qp.posted, EndReason::kComplete); !ended.ok()) {
        return ended;
      }
      qp.end_posted = true;
    }
  }
  return absl::OkStatus();
}

absl::Status BandwidthRun::Handle(const ibv_wc& wc, Clock::time_point now) {
  if (wc.status != IBV_WC_SUCCESS) return path_.Failure(wc);
  const std::optional<WorkId> id = WorkId::Decode(wc.wr_id);
  if (!id.has_value() || id->qp >= qps_.size()) {
    return absl::InternalError(absl::StrFormat("%s: a completion with unknown wr_id 0x%x",
                                               QpName(path_.device, wc.qp_num), wc.wr_id));
  }
  QpState& qp = qps_[id->qp];
  if (id->kind != WorkId::Kind::kReceive) {
    if (id->count > qp.completed) {
      const uint64_t newly = id->count - qp.completed;
      completed_ += newly;
      if (path_.bytes != nullptr) {
        path_.bytes->fetch_add(newly * options_.message_bytes, std::memory_order_relaxed);
      }
      qp.completed = id->count;
      last_completion_ = now;
      watch_.Moved(now);
      if (per_qp_ != 0) peak_.Record(completed_, now);
    }
    if (id->kind == WorkId::Kind::kEnd) qp.end_done = true;
    return absl::OkStatus();
  }
  if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) {
    if (absl::Status ended = PeerEndOfTest(path_.device, wc.qp_num, ntohl(wc.imm_data));
        !ended.ok()) {
      return ended;
    }
    qp.peer_ended = true;
    return absl::OkStatus();
  }
  if (!receives_data_) {
    return absl::DataLossError(absl::StrCat(
        QpName(path_.device, wc.qp_num), ": received an unexpected ", wc.byte_len,
        "-byte message during ", options_.test, ": is another test using this QP's peer?"));
  }
  if (wc.byte_len != options_.message_bytes) {
    return absl::DataLossError(absl::StrCat(
        QpName(path_.device, wc.qp_num), ": received a ", wc.byte_len, "-byte message, expected ",
        options_.message_bytes, ": was the peer prepared with a different message_bytes?"));
  }
  ++qp.received;
  ++received_;
  // A bidirectional side reports what it sends; only a pure receiver counts this.
  if (path_.bytes != nullptr && !sending_) {
    path_.bytes->fetch_add(options_.message_bytes, std::memory_order_relaxed);
  }
  if (!first_receive_.has_value()) first_receive_ = now;
  last_receive_ = now;
  watch_.Moved(now);
  return path_.PostReceive(id->qp);
}

bool BandwidthRun::Done() const {
  return std::all_of(qps_.begin(), qps_.end(), [&](const QpState& qp) {
    return (!sending_ || qp.end_done) && (!expects_end_ || qp.peer_ended);
  });
}

absl::Status BandwidthRun::CheckReceived() const {
  if (!receives_data_ || per_qp_ == 0) return absl::OkStatus();
  for (size_t q = 0; q < qps_.size(); ++q) {
    if (qps_[q].received != per_qp_) {
      return absl::DataLossError(absl::StrCat(
          QpName(path_.device, path_.qps[q]->qp_num), " received ", qps_[q].received,
          " messages, expected ", per_qp_,
          " (iterations): the sender stopped early or was prepared with a different spec"));
    }
  }
  return absl::OkStatus();
}

void BandwidthRun::AbortSends() {
  if (!sending_) return;
  for (size_t q = 0; q < qps_.size(); ++q) {
    QpState& qp = qps_[q];
    if (qp.end_posted) continue;
    if (path_.PostEnd(q, qp.posted, EndReason::kAborted).ok()) qp.end_posted = true;
  }
}

std::string BandwidthRun::Waiting() const {
  size_t unsent = 0;
  size_t unheard = 0;
  for (const QpState& qp : qps_) {
    if (sending_ && !qp.end_done) ++unsent;
    if (expects_end_ && !qp.peer_ended) ++unheard;
  }
  if (unsent > 0) {
    return absl::StrCat("sending (", unsent, " of ", qps_.size(), " QPs not finished)");
  }
  return absl::StrCat("waiting for the peer's end-of-test signal on ", unheard, " of ", qps_.size(),
                      " QPs");
}

absl::StatusOr<v1::PeerTestResult> BandwidthRun::Run() {
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at = options_.duration_mode()
                                        ? start + absl::ToChronoNanoseconds(options_.duration)
                                        : Clock::time_point::max();
  first_post_ = start;
  last_completion_ = start;
  last_receive_ = start;  // the stall nap measures silence from here
  watch_.Moved(start);
  if (per_qp_ != 0) peak_.Record(0, start);
  const bool passive = !sending_ && !receives_data_;
  ibv_wc wcs[kPollBatch];
  while (!Done()) {
    const Clock::time_point now = Clock::now();
    if (absl::Status go_on = watch_.Check(now, [&] { return Waiting(); }); !go_on.ok()) {
      AbortSends();
      return go_on;
    }
    if (sending_) {
      if (absl::Status posted = PostSends(now >= stop_at); !posted.ok()) return posted;
    }
    absl::StatusOr<int> found = path_.Poll(wcs, kPollBatch);
    if (!found.ok()) return found.status();
    if (*found == 0) {
      const Clock::time_point last_activity = std::max(last_completion_, last_receive_);
      if (passive) {
        std::this_thread::sleep_for(kPassiveNap);
      } else if (now - last_activity > kStallBeforeNap) {
        std::this_thread::sleep_for(kStallNap);
      }
      continue;
    }
    const Clock::time_point polled = Clock::now();
    for (int i = 0; i < *found; ++i) {
      if (absl::Status handled = Handle(wcs[i], polled); !handled.ok()) {
        AbortSends();
        return handled;
      }
    }
  }
  if (absl::Status checked = CheckReceived(); !checked.ok()) return checked;

  v1::PeerTestResult result;
  if (sending_) {
    // The sender's figure: first post to the last completion, as perftest's
    // tposted[0] .. tcompleted[last]. Peak only in iterations mode, as perftest.
    const std::optional<absl::Duration> gap =
        per_qp_ != 0 ? peak_.SmallestGap() : std::optional<absl::Duration>();
    *result.mutable_bandwidth() = ComputeBandwidth(
        options_.message_bytes, completed_, absl::FromChrono(last_completion_ - first_post_), gap);
  } else if (receives_data_ && first_receive_.has_value()) {
    // The receiver's figure: first to last receive completion.
    *result.mutable_bandwidth() =
        ComputeBandwidth(options_.message_bytes, received_,
                         absl::FromChrono(last_receive_ - *first_receive_), std::nullopt);
  }
  return result;
}

}  // namespace

absl::StatusOr<v1::PeerTestResult> RunBandwidth(const DataPath& path) {
  BandwidthRun run(path);
  return run.Run();
}

}  // namespace clustercert::agent::peer
