// The latency loops (write_lat, send_lat, read_lat): a ping-pong on one QP, as
// perftest's run_iter_lat_write / run_iter_lat_send / run_iter_lat do. The
// client times each round trip on the steady clock (CLOCK_MONOTONIC):
//   write_lat  the client writes iteration n into the last byte of the
//              server's receive region; the server, polling that byte, writes
//              n back; the client polls its own receive region for n.
//   send_lat   send, the server's receive completion, its send back, the
//              client's receive completion.
//   read_lat   an RDMA READ and its completion; the server stays passive.
// Then the client sends the end-of-test signal, which ends the server's loop.

#include <arpa/inet.h>

#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/peer/run_shape.h"
#include "agent/peer/verbs_datapath.h"
#include "common/perf_stats.h"

namespace clustercert::agent::peer {
namespace {

using Clock = DataPath::Clock;
using Operation = VerbsTestOptions::Operation;

constexpr int kPollBatch = 8;
// While spinning on a buffer byte, look at the CQ and the clock this often.
constexpr uint32_t kSpinsPerPoll = 64;
constexpr auto kPassiveNap = std::chrono::microseconds(50);

class LatencyRun {
 public:
  explicit LatencyRun(const DataPath& path) : path_(path), options_(*path.options) {}

  absl::StatusOr<v1::PeerTestResult> Run();

 private:
  absl::StatusOr<v1::PeerTestResult> RunClient();
  absl::Status RunServer();

  // One CQ poll: send completions free the send slot, data receives are
  // counted (and re-posted), the end signal is noted.
  absl::Status PollOnce();
  // Polls until `ready()` or the deadline; `doing` names the wait.
  template <typename Ready>
  absl::Status WaitFor(Ready ready, const char* doing, bool nap = false);
  absl::Status WaitForSendSlot() {
    return WaitFor([&] { return posted_ - completed_ < options_.tx_depth(); },
                   "waiting for a send completion");
  }
  absl::Status Post(uint64_t n);
  // OK while the run may go on (ProgressWatch); `doing` names the wait.
  template <typename Doing>
  absl::Status GoOn(Doing doing) const {
    return watch_->Check(Clock::now(), [&] { return std::string(doing()); });
  }
  absl::Status GoOn(const char* doing) const {
    return GoOn([doing] { return doing; });
  }

  const DataPath& path_;
  const VerbsTestOptions& options_;
  uint64_t posted_ = 0;     // data work requests posted
  uint64_t completed_ = 0;  // data work requests complete
  uint64_t pending_receives_ = 0;
  bool end_done_ = false;
  bool peer_ended_ = false;
  std::optional<ProgressWatch> watch_;  // from Run()
};

absl::Status LatencyRun::PollOnce() {
  ibv_wc wcs[kPollBatch];
  absl::StatusOr<int> found = path_.Poll(wcs, kPollBatch);
  if (!found.ok()) return found.status();
  if (*found > 0) watch_->Moved(Clock::now());
  for (int i = 0; i < *found; ++i) {
    const ibv_wc& wc = wcs[i];
    if (wc.status != IBV_WC_SUCCESS) return path_.Failure(wc);
    const std::optional<WorkId> id = WorkId::Decode(wc.wr_id);
    if (!id.has_value() || id->qp != 0) {
      return absl::InternalError(absl::StrFormat("%s: a completion with unknown wr_id 0x%x",
                                                 QpName(path_.device, wc.qp_num), wc.wr_id));
    }
    if (id->kind != WorkId::Kind::kReceive) {
      if (id->count > completed_) completed_ = id->count;
      if (id->kind == WorkId::Kind::kEnd) end_done_ = true;
      continue;
    }
    if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) {
      if (absl::Status ended = PeerEndOfTest(path_.device, wc.qp_num, ntohl(wc.imm_data));
          !ended.ok()) {
        return ended;
      }
      peer_ended_ = true;
      continue;
    }
    if (options_.operation != Operation::kSend || wc.byte_len != options_.message_bytes) {
      return absl::DataLossError(absl::StrCat(
          QpName(path_.device, wc.qp_num), ": received an unexpected ", wc.byte_len,
          "-byte message during ", options_.test, ": was the peer prepared with the same spec?"));
    }
    ++pending_receives_;
    if (absl::Status posted = path_.PostReceive(0); !posted.ok()) return posted;
  }
  return absl::OkStatus();
}

template <typename Ready>
absl::Status LatencyRun::WaitFor(Ready ready, const char* doing, bool nap) {
  while (!ready()) {
    if (absl::Status go_on = GoOn(doing); !go_on.ok()) return go_on;
    if (absl::Status polled = PollOnce(); !polled.ok()) return polled;
    if (nap && !ready()) std::this_thread::sleep_for(kPassiveNap);
  }
  return absl::OkStatus();
}

absl::Status LatencyRun::Post(uint64_t n) {
  if (absl::Status slot = WaitForSendSlot(); !slot.ok()) return slot;
  if (absl::Status posted = path_.PostData(0, n, /*signaled=*/true); !posted.ok()) return posted;
  posted_ = n;
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestResult> LatencyRun::RunClient() {
  const uint64_t message = options_.message_bytes;
  volatile uint8_t* poll_byte = nullptr;
  volatile uint8_t* post_byte = nullptr;
  if (options_.operation == Operation::kWrite) {
    poll_byte = path_.host + path_.receive_offset() + message - 1;
    post_byte = path_.host + message - 1;
  }
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at = options_.duration_mode()
                                        ? start + absl::ToChronoNanoseconds(options_.duration)
                                        : Clock::time_point::max();
  const uint64_t limit = options_.duration_mode() ? kMaxLatencySamples : options_.iterations;
  std::vector<double> rtt_us;
  rtt_us.reserve(options_.duration_mode() ? 1 << 16 : limit);

  for (uint64_t n = 1; n <= limit; ++n) {
    if (Clock::now() >= stop_at) break;
    // Checked per iteration too: a fast echo may never reach a spin check.
    if (absl::Status go_on = GoOn([n] { return absl::StrCat("at iteration ", n); }); !go_on.ok()) {
      return go_on;
    }
    if (absl::Status slot = WaitForSendSlot(); !slot.ok()) return slot;
    if (post_byte != nullptr) *post_byte = static_cast<uint8_t>(n);
    const Clock::time_point sent = Clock::now();
    if (absl::Status posted = path_.PostData(0, n, /*signaled=*/true); !posted.ok()) return posted;
    posted_ = n;
    switch (options_.operation) {
      case Operation::kWrite: {
        uint32_t spins = 0;
        while (*poll_byte != static_cast<uint8_t>(n)) {
          if (++spins % kSpinsPerPoll != 0) continue;
          if (absl::Status go_on = GoOn("waiting for the echo"); !go_on.ok()) return go_on;
          if (absl::Status polled = PollOnce(); !polled.ok()) return polled;
        }
        watch_->Moved(Clock::now());
        break;
      }
      case Operation::kSend:
        if (absl::Status echoed =
                WaitFor([&] { return pending_receives_ > 0; }, "waiting for the echo");
            !echoed.ok()) {
          return echoed;
        }
        --pending_receives_;
        break;
      case Operation::kRead:
        if (absl::Status read =
                WaitFor([&] { return completed_ >= n; }, "waiting for the read to complete");
            !read.ok()) {
          return read;
        }
        break;
    }
    rtt_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
  }

  if (absl::Status slot = WaitForSendSlot(); !slot.ok()) return slot;
  if (absl::Status ended = path_.PostEnd(0, posted_, EndReason::kComplete); !ended.ok()) {
    return ended;
  }
  if (absl::Status sent = WaitFor([&] { return end_done_; }, "sending the end-of-test signal");
      !sent.ok()) {
    return sent;
  }

  v1::PeerTestResult result;
  const bool capped = options_.duration_mode() && rtt_us.size() >= limit;
  if (options_.operation != Operation::kRead) {
    for (double& sample : rtt_us) sample = OneWayFromRoundTrip(sample);
  }
  *result.mutable_latency() = ComputeLatency(std::move(rtt_us));
  if (capped) {
    result.set_detail(absl::StrCat("; stopped at ", limit, " samples before duration_s"));
  }
  return result;
}

absl::Status LatencyRun::RunServer() {
  switch (options_.operation) {
    case Operation::kWrite: {
      const uint64_t message = options_.message_bytes;
      volatile uint8_t* poll_byte = path_.host + path_.receive_offset() + message - 1;
      volatile uint8_t* post_byte = path_.host + message - 1;
      for (uint64_t n = 1;; ++n) {
        auto doing = [n] { return absl::StrCat("waiting for ping ", n); };
        if (absl::Status go_on = GoOn(doing); !go_on.ok()) return go_on;
        uint32_t spins = 0;
        while (*poll_byte != static_cast<uint8_t>(n)) {
          if (++spins % kSpinsPerPoll != 0) continue;
          if (absl::Status go_on = GoOn(doing); !go_on.ok()) return go_on;
          if (absl::Status polled = PollOnce(); !polled.ok()) return polled;
          if (peer_ended_) return absl::OkStatus();
        }
        watch_->Moved(Clock::now());
        if (absl::Status slot = WaitForSendSlot(); !slot.ok()) return slot;
        *post_byte = static_cast<uint8_t>(n);
        if (absl::Status posted = path_.PostData(0, n, true); !posted.ok()) return posted;
        posted_ = n;
      }
    }
    case Operation::kSend:
      for (uint64_t n = 1;; ++n) {
        if (absl::Status pinged =
                WaitFor([&] { return pending_receives_ > 0 || peer_ended_; }, "waiting for a ping");
            !pinged.ok()) {
          return pinged;
        }
        if (pending_receives_ == 0) return absl::OkStatus();  // the end came
        --pending_receives_;
        if (absl::Status echoed = Post(n); !echoed.ok()) return echoed;
      }
    case Operation::kRead:
      return WaitFor([&] { return peer_ended_; }, "waiting for the client's end-of-test signal",
                     /*nap=*/true);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::PeerTestResult> LatencyRun::Run() {
  if (options_.operation == Operation::kWrite && path_.host == nullptr) {
    return absl::FailedPreconditionError(
        "write_lat polls the buffer from the CPU, and this buffer is not host memory");
  }
  // The read_lat server is the target of reads: it sees nothing move.
  const bool sees_progress = !options_.server || options_.operation != Operation::kRead;
  watch_.emplace(path_, sees_progress, Clock::now());
  if (!options_.server) {
    absl::StatusOr<v1::PeerTestResult> result = RunClient();
    // Best effort: a client out of time (or stopped) tells the server, which would otherwise
    // wait for its own deadline. A QP that failed cannot carry it, and needs not.
    const absl::StatusCode code = result.status().code();
    if ((code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled) &&
        !end_done_) {
      path_.PostEnd(0, posted_, EndReason::kAborted).IgnoreError();
    }
    return result;
  }
  if (absl::Status served = RunServer(); !served.ok()) return served;
  return v1::PeerTestResult();
}

}  // namespace

absl::StatusOr<v1::PeerTestResult> RunLatency(const DataPath& path) {
  LatencyRun run(path);
  return run.Run();
}

}  // namespace clustercert::agent::peer
