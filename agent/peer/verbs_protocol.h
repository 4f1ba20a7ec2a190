#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/peer/verbs_options.h"
#include "clustercert/v1/peer.pb.h"

// The verbs engine's arithmetic and wire conventions, free of any device so
// they are unit-tested here and only the posting and polling need the lab.
//
// Buffer layout. Each endpoint registers one buffer of 2 x ReceiveOffset bytes:
// the send region [0, message_bytes) is what this side writes, sends or is
// read from; the receive region [ReceiveOffset, +message_bytes) is where the
// peer's writes, sends and this side's reads land. write_lat polls the last
// byte of the receive region, as perftest does. All QPs share the buffer.
//
// End of test. Every QP that carries measured traffic ends with one zero-length
// IBV_WR_SEND_WITH_IMM from the side that posted it, signaled, whose immediate
// is EncodeEndOfTest(reason). The receiving side keeps a receive posted for it
// on every QP (for send tests the ordinary data receives serve), so a passive
// server sees a completion with IBV_WC_WITH_IMM and returns at once, instead of
// waiting for its deadline; RC delivers it after every earlier operation on the
// QP, so it also marks the end of the data. Its send completion tells the
// sender that all earlier (unsignaled) work requests have completed. A sender
// that gives up while its QP still works (its deadline) sends reason kAborted,
// which the receiver reports as Aborted. The immediate travels big-endian.
namespace clustercert::agent::peer {

// Where the receive region starts: message_bytes rounded up to 4 KiB.
uint64_t ReceiveOffset(uint64_t message_bytes);
// The buffer an endpoint registers: both regions.
uint64_t BufferBytes(uint64_t message_bytes);

// Bandwidth senders signal one work request in `SignalEvery(tx_depth)` —
// half the queue, so a full queue always holds a signaled request whose
// completion frees room — plus the last one of an iterations run.
uint32_t SignalEvery(uint32_t tx_depth);
// Whether work request `index` (0-based) of `total` (0: duration mode, no
// last one) is signaled.
bool IsSignaled(uint64_t index, uint32_t every, uint64_t total);

// Receives each side keeps posted per QP: send_bw receivers 512 (perftest's
// rx depth), send_lat 2 on both sides (a ping and the end signal), any other
// side that expects the peer's end signal 1, and 0 otherwise.
uint32_t ReceiveDepth(const VerbsTestOptions& options);
// RDMA READs in flight per QP for read tests (perftest's out_reads): the
// device's limit, at most 16; 1 for the other tests. Both sides derive it the
// same way, since EndpointInfo carries no out_reads.
uint8_t ReadsInFlight(const VerbsTestOptions& options, const ibv_device_attr& device);

// A work request id: what it was, on which QP (index in the endpoint), and for
// sends the number of work requests that QP had posted including this one.
struct WorkId {
  enum class Kind : uint8_t { kData = 1, kEnd = 2, kReceive = 3 };
  static constexpr uint64_t kMaxCount = (uint64_t{1} << 48) - 1;

  Kind kind = Kind::kData;
  uint32_t qp = 0;     // < 256
  uint64_t count = 0;  // <= kMaxCount

  uint64_t Encode() const;
  // nullopt for an id this engine did not make.
  static std::optional<WorkId> Decode(uint64_t wr_id);
};

enum class EndReason : uint8_t { kComplete = 0, kAborted = 1 };
// Host-order immediate: 0xCCE0 in bits 31..16, version 1 in 15..8, reason in 7..0.
uint32_t EncodeEndOfTest(EndReason reason);
// DataLoss for an immediate that is not ours (a different test or version).
absl::StatusOr<EndReason> DecodeEndOfTest(uint32_t immediate);
// What the peer's end-of-test immediate (host order) received on `qp_num`
// says: Ok when the peer completed its test, Aborted when it reached its
// deadline, DataLoss for an immediate that is not ours; errors name the QP.
absl::Status PeerEndOfTest(absl::string_view device, uint32_t qp_num, uint32_t immediate);

// perftest's peak: the least time per message over a run of consecutive
// completions. Record(completed_so_far, when) after each completion (start
// with Record(0, first_post)); for each recorded point the run extends to the
// first later point at least `window` messages on, so a burst of completions
// polled together cannot fake a peak. Memory stays within one window.
class PeakTracker {
 public:
  using Clock = std::chrono::steady_clock;
  explicit PeakTracker(uint64_t window);

  void Record(uint64_t completed, Clock::time_point when);
  // The least per-message time over any full window; with fewer than `window`
  // messages, the average over all of them; nullopt before any message.
  std::optional<absl::Duration> SmallestGap() const;

 private:
  struct Point {
    uint64_t completed;
    Clock::time_point when;
  };
  uint64_t window_;
  std::deque<Point> pending_;
  std::optional<Point> first_;
  std::optional<Point> last_;
  std::optional<absl::Duration> best_;
};

// "mlx5_0 QP 0x11".
std::string QpName(absl::string_view device, uint32_t qp_num);
// "IBV_WC_RETRY_EXC_ERR"; "IBV_WC status 99" for a code this build's
// rdma-core does not name. An int, not ibv_wc_status: a newer provider may
// return a code past the enum's range, and holding that in the enum type is
// undefined behaviour.
std::string WcStatusName(int status);
// Unavailable: "mlx5_0 QP 0x11: IBV_WC_RETRY_EXC_ERR (transport retry counter
// exceeded, vendor error 0x81) after 1.2 s of write_bw: the peer stopped
// answering — check the path MTU end to end and the peer's port".
absl::Status CompletionFailure(absl::string_view device, uint32_t qp_num, ibv_wc_status status,
                               uint32_t vendor_err, absl::Duration after, absl::string_view test);

// Checks the peer's EndpointInfo against ours before any QP moves: QP and PSN
// counts, GID size, link layer, LID or GID, MTU, and the buffer address the
// one-sided tests need. InvalidArgument naming the field.
absl::Status CheckPeerInfo(const VerbsTestOptions& options, const v1::EndpointInfo& local,
                           const v1::EndpointInfo& peer);

// The result's detail: "verbs RC, 1 QP, mtu 4096, tx depth 128", then what
// this side's figure is.
std::string DetailOf(const VerbsTestOptions& options, uint32_t path_mtu_bytes, bool inline_data);

}  // namespace clustercert::agent::peer
