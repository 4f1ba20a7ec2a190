#include "agent/peer/verbs_protocol.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace clustercert::agent::peer {
namespace {

constexpr uint64_t kRegionAlignment = 4096;
constexpr uint32_t kSendBwReceiveDepth = 512;
constexpr uint8_t kMaxReadsInFlight = 16;

constexpr uint32_t kEndMagic = 0xCCE0;
constexpr uint32_t kEndVersion = 1;

constexpr int kKindShift = 56;
constexpr int kQpShift = 48;

// What a failed completion most likely means, and what to do about it.
const char* WcStatusHint(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "the peer stopped answering — check the path MTU end to end and the peer's port";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "the peer had no receive posted — is the peer's endpoint still running?";
    case IBV_WC_REM_ACCESS_ERR:
      return "the peer refused the remote access — its rkey or address does not match: were "
             "both sides prepared with the same spec?";
    case IBV_WC_REM_INV_REQ_ERR:
      return "the peer rejected the request — a message larger than its buffer, or more reads "
             "in flight than it accepts: were both sides prepared with the same spec?";
    case IBV_WC_LOC_LEN_ERR:
      return "a message was longer than the receive buffer — the peer sends larger messages: "
             "were both sides prepared with the same message_bytes?";
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
      return "the local memory registration does not cover the buffer — an engine bug";
    case IBV_WC_WR_FLUSH_ERR:
      return "the QP had already failed; an earlier completion holds the cause";
    case IBV_WC_REM_OP_ERR:
      return "the peer failed to carry out the operation — check the peer's result";
    case IBV_WC_LOC_QP_OP_ERR:
      return "the local QP rejected the work request — an engine bug or a device limit";
    default:
      return "check both ports with ibv_devinfo and the peer's result";
  }
}

}  // namespace

uint64_t ReceiveOffset(uint64_t message_bytes) {
  return std::max<uint64_t>(1, (message_bytes + kRegionAlignment - 1) / kRegionAlignment) *
         kRegionAlignment;
}

uint64_t BufferBytes(uint64_t message_bytes) { return 2 * ReceiveOffset(message_bytes); }

uint32_t SignalEvery(uint32_t tx_depth) { return std::max<uint32_t>(1, tx_depth / 2); }

bool IsSignaled(uint64_t index, uint32_t every, uint64_t total) {
  if (every <= 1) return true;
  if (total != 0 && index + 1 == total) return true;
  return (index + 1) % every == 0;
}

uint32_t ReceiveDepth(const VerbsTestOptions& options) {
  const bool expects_end = options.server || options.bidirectional;
  if (options.operation == VerbsTestOptions::Operation::kSend) {
    if (options.latency()) return 2;
    return expects_end ? kSendBwReceiveDepth : 0;
  }
  return expects_end ? 1 : 0;
}

uint8_t ReadsInFlight(const VerbsTestOptions& options, const ibv_device_attr& device) {
  if (options.operation != VerbsTestOptions::Operation::kRead) return 1;
  const int limit = std::min(
      {static_cast<int>(kMaxReadsInFlight), device.max_qp_rd_atom, device.max_qp_init_rd_atom});
  return static_cast<uint8_t>(std::max(1, limit));
}

uint64_t WorkId::Encode() const {
  return (uint64_t{static_cast<uint8_t>(kind)} << kKindShift) | (uint64_t{qp & 0xFF} << kQpShift) |
         (count & kMaxCount);
}

std::optional<WorkId> WorkId::Decode(uint64_t wr_id) {
  const auto kind = static_cast<uint8_t>(wr_id >> kKindShift);
  if (kind < static_cast<uint8_t>(Kind::kData) || kind > static_cast<uint8_t>(Kind::kReceive)) {
    return std::nullopt;
  }
  WorkId id;
  id.kind = static_cast<Kind>(kind);
  id.qp = static_cast<uint32_t>((wr_id >> kQpShift) & 0xFF);
  id.count = wr_id & kMaxCount;
  return id;
}

uint32_t EncodeEndOfTest(EndReason reason) {
  return (kEndMagic << 16) | (kEndVersion << 8) | static_cast<uint8_t>(reason);
}

absl::StatusOr<EndReason> DecodeEndOfTest(uint32_t immediate) {
  const uint32_t magic = immediate >> 16;
  const uint32_t version = (immediate >> 8) & 0xFF;
  const uint32_t reason = immediate & 0xFF;
  if (magic != kEndMagic || version != kEndVersion ||
      reason > static_cast<uint8_t>(EndReason::kAborted)) {
    return absl::DataLossError(absl::StrFormat(
        "immediate 0x%08x is not a clustercert end-of-test signal (expected 0x%04x%02x0r): the "
        "peer runs a different test or agent version",
        immediate, kEndMagic, kEndVersion));
  }
  return static_cast<EndReason>(reason);
}

absl::Status PeerEndOfTest(absl::string_view device, uint32_t qp_num, uint32_t immediate) {
  absl::StatusOr<EndReason> reason = DecodeEndOfTest(immediate);
  if (!reason.ok()) {
    return absl::DataLossError(
        absl::StrCat(QpName(device, qp_num), ": ", reason.status().message()));
  }
  if (*reason == EndReason::kAborted) {
    return absl::AbortedError(absl::StrCat(
        QpName(device, qp_num),
        ": the peer aborted the test (it reached its deadline): see the peer's result"));
  }
  return absl::OkStatus();
}

PeakTracker::PeakTracker(uint64_t window) : window_(std::max<uint64_t>(1, window)) {}

void PeakTracker::Record(uint64_t completed, Clock::time_point when) {
  const Point point{completed, when};
  if (!first_.has_value()) first_ = point;
  last_ = point;
  while (!pending_.empty() && completed - pending_.front().completed >= window_) {
    const Point& from = pending_.front();
    const absl::Duration gap =
        absl::FromChrono(when - from.when) / static_cast<double>(completed - from.completed);
    if (!best_.has_value() || gap < *best_) best_ = gap;
    pending_.pop_front();
  }
  pending_.push_back(point);
}

std::optional<absl::Duration> PeakTracker::SmallestGap() const {
  if (best_.has_value()) return best_;
  if (!first_.has_value() || last_->completed <= first_->completed) return std::nullopt;
  return absl::FromChrono(last_->when - first_->when) /
         static_cast<double>(last_->completed - first_->completed);
}

std::string QpName(absl::string_view device, uint32_t qp_num) {
  return absl::StrFormat("%s QP 0x%x", device, qp_num);
}

std::string WcStatusName(int status) {
  static constexpr std::array<const char*, 24> kNames = {
      "IBV_WC_SUCCESS",
      "IBV_WC_LOC_LEN_ERR",
      "IBV_WC_LOC_QP_OP_ERR",
      "IBV_WC_LOC_EEC_OP_ERR",
      "IBV_WC_LOC_PROT_ERR",
      "IBV_WC_WR_FLUSH_ERR",
      "IBV_WC_MW_BIND_ERR",
      "IBV_WC_BAD_RESP_ERR",
      "IBV_WC_LOC_ACCESS_ERR",
      "IBV_WC_REM_INV_REQ_ERR",
      "IBV_WC_REM_ACCESS_ERR",
      "IBV_WC_REM_OP_ERR",
      "IBV_WC_RETRY_EXC_ERR",
      "IBV_WC_RNR_RETRY_EXC_ERR",
      "IBV_WC_LOC_RDD_VIOL_ERR",
      "IBV_WC_REM_INV_RD_REQ_ERR",
      "IBV_WC_REM_ABORT_ERR",
      "IBV_WC_INV_EECN_ERR",
      "IBV_WC_INV_EEC_STATE_ERR",
      "IBV_WC_FATAL_ERR",
      "IBV_WC_RESP_TIMEOUT_ERR",
      "IBV_WC_GENERAL_ERR",
      "IBV_WC_TM_ERR",
      "IBV_WC_TM_RNDV_INCOMPLETE",
  };
  if (status >= 0 && static_cast<size_t>(status) < kNames.size()) {
    return kNames[static_cast<size_t>(status)];
  }
  return absl::StrCat("IBV_WC status ", status);
}

absl::Status CompletionFailure(absl::string_view device, uint32_t qp_num, ibv_wc_status status,
                               uint32_t vendor_err, absl::Duration after, absl::string_view test) {
  return absl::UnavailableError(absl::StrFormat(
      "%s: %s (%s, vendor error 0x%x) after %.1f s of %s: %s", QpName(device, qp_num),
      WcStatusName(static_cast<int>(status)), ibv_wc_status_str(status), vendor_err,
      absl::ToDoubleSeconds(after), test, WcStatusHint(status)));
}

absl::Status CheckPeerInfo(const VerbsTestOptions& options, const v1::EndpointInfo& local,
                           const v1::EndpointInfo& peer) {
  if (static_cast<uint32_t>(peer.qpn_size()) != options.streams ||
      static_cast<uint32_t>(peer.psn_size()) != options.streams) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the peer offers ", peer.qpn_size(), " QPs and ", peer.psn_size(), " PSNs, this side has ",
        options.streams, " (streams): were both sides prepared with the same spec?"));
  }
  for (int i = 0; i < peer.qpn_size(); ++i) {
    if (peer.qpn(i) == 0 || peer.qpn(i) > 0xFFFFFF || peer.psn(i) > 0xFFFFFF) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the peer's QP %d has qpn 0x%x and psn 0x%x: a qpn is a non-zero 24-bit number and "
          "a psn a 24-bit one",
          i, peer.qpn(i), peer.psn(i)));
    }
  }
  if (peer.link_layer() != local.link_layer()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the peer's link layer is \"", peer.link_layer(), "\", this port's is \"",
                     local.link_layer(), "\": an RC QP cannot join InfiniBand and Ethernet ports"));
  }
  if (peer.gid().size() != sizeof(ibv_gid)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the peer's gid has ", peer.gid().size(), " bytes, expected 16"));
  }
  if (local.link_layer() == "Ethernet") {
    if (peer.gid() == std::string(sizeof(ibv_gid), '\0')) {
      return absl::InvalidArgumentError(
          "the peer's gid is all zeros: RoCE needs the peer's GID at its gid_index");
    }
  } else if (peer.lid() == 0 || peer.lid() > 0xFFFF) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the peer's lid is ", peer.lid(), ": InfiniBand needs a LID from the subnet manager"));
  }
  absl::StatusOr<ibv_mtu> mtu = PathMtu(local.active_mtu(), peer.active_mtu());
  if (!mtu.ok()) return mtu.status();
  if (options.operation != VerbsTestOptions::Operation::kSend && peer.vaddr() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("the peer's vaddr is 0: ", options.test,
                                                   " needs the peer's registered buffer"));
  }
  return absl::OkStatus();
}

std::string DetailOf(const VerbsTestOptions& options, uint32_t path_mtu_bytes, bool inline_data) {
  std::string detail =
      absl::StrCat("verbs RC, ", options.streams, options.streams == 1 ? " QP" : " QPs", ", mtu ",
                   path_mtu_bytes, ", tx depth ", options.tx_depth());
  if (inline_data) absl::StrAppend(&detail, ", inline");
  const bool read = options.operation == VerbsTestOptions::Operation::kRead;
  if (options.latency()) {
    if (options.server) {
      absl::StrAppend(&detail, read ? "; server: passive, the client measures"
                                    : "; server: echoes, the client measures");
    } else {
      absl::StrAppend(&detail, read ? "; client: ping-pong, latency = RTT"
                                    : "; client: ping-pong, one-way = RTT/2");
    }
  } else if (options.bidirectional) {
    absl::StrAppend(&detail,
                    "; bidirectional: this side's sending direction (add the peer's result)");
  } else if (options.server) {
    absl::StrAppend(&detail, options.operation == VerbsTestOptions::Operation::kSend
                                 ? "; server: receiver's figure"
                                 : "; server: passive (one-sided RDMA), the client measures");
  } else {
    absl::StrAppend(&detail, "; client: sender's figure from completions");
  }
  return detail;
}

}  // namespace clustercert::agent::peer
