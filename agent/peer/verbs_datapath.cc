#include "agent/peer/verbs_datapath.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/peer/verbs_resources.h"
#include "common/errno_text.h"
#include "common/ib_mtu.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::peer {
namespace {

absl::Status PostFailure(const DataPath& path, size_t qp, const char* what, int rc) {
  return absl::InternalError(absl::StrCat(
      QpName(path.device, path.qps[qp]->qp_num), ": ", what, " failed: ", ErrnoText(rc),
      rc == ENOMEM ? " (the queue is full: an engine bug)" : ""));
}

// The retransmit, NAK and packet counters a stall is read from: rdma_rxe's
// names, then mlx5's (kernel Documentation/.../mlx5 counters). Others are
// left out of the message: a port has dozens.
constexpr const char* kStallCounters[] = {
    "sent_pkts",           "rcvd_pkts",
    "duplicate_request",   "out_of_seq_request",
    "rcvd_seq_err",        "ack_deferred",
    "retry_exceeded_err",  "retry_rnr_exceeded_err",
    "completer_retry_err", "send_rnr_err",
    "rcvd_rnr_err",        "send_err",
    "link_downed",         "local_ack_timeout_err",
    "packet_seq_err",      "out_of_sequence",
    "implied_nak_seq_err", "rnr_nak_retry_err",
    "req_cqe_error",       "resp_cqe_error",
};
constexpr size_t kMaxCounterFiles = 512;

const char* QpStateName(ibv_qp_state state) {
  switch (state) {
    case IBV_QPS_RESET:
      return "RESET";
    case IBV_QPS_INIT:
      return "INIT";
    case IBV_QPS_RTR:
      return "RTR";
    case IBV_QPS_RTS:
      return "RTS";
    case IBV_QPS_SQD:
      return "SQD";
    case IBV_QPS_SQE:
      return "SQE";
    case IBV_QPS_ERR:
      return "ERR";
    default:
      return "unknown";
  }
}

class LiveProbe : public StallProbe {
 public:
  absl::StatusOr<QpView> QueryQp(ibv_qp* qp) const override {
    ibv_qp_attr attr;
    ibv_qp_init_attr init;
    std::memset(&attr, 0, sizeof(attr));
    std::memset(&init, 0, sizeof(init));
    const int mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
                     IBV_QP_DEST_QPN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                     IBV_QP_AV;
    const int rc = ibv_query_qp(qp, &attr, mask, &init);
    if (rc != 0) {
      return absl::UnavailableError(absl::StrCat("ibv_query_qp of QP 0x", absl::Hex(qp->qp_num),
                                                 " failed: ", ErrnoText(rc > 0 ? rc : errno)));
    }
    QpView view;
    view.qpn = qp->qp_num;
    view.state = QpStateName(attr.qp_state);
    view.path_mtu_bytes = IbMtuToBytes(attr.path_mtu).value_or(0);
    view.sq_psn = attr.sq_psn;
    view.rq_psn = attr.rq_psn;
    view.dest_qpn = attr.dest_qp_num;
    view.timeout = attr.timeout;
    view.retry_cnt = attr.retry_cnt;
    view.rnr_retry = attr.rnr_retry;
    view.sgid_index = attr.ah_attr.grh.sgid_index;
    return view;
  }

  absl::StatusOr<PortCounterMap> ReadCounters(const std::string& device,
                                              uint32_t port) const override {
    const std::string dir =
        absl::StrCat("/sys/class/infiniband/", device, "/ports/", port, "/hw_counters");
    absl::StatusOr<std::vector<std::string>> names = sysfs_.ListDirBounded(dir, kMaxCounterFiles);
    if (!names.ok()) return names.status();
    PortCounterMap counters;
    for (const std::string& name : *names) {
      absl::StatusOr<std::string> text = sysfs_.ReadText(absl::StrCat(dir, "/", name));
      uint64_t value = 0;
      if (text.ok() && absl::SimpleAtoi(*text, &value)) counters[name] = value;
    }
    return counters;
  }

 private:
  SysfsView sysfs_{"/"};
};

}  // namespace

const StallProbe& LiveStallProbe() {
  static const LiveProbe* const probe = new LiveProbe();
  return *probe;
}

std::string FormatStall(const std::string& device, uint32_t port, const StallView& view) {
  std::vector<std::string> parts;
  for (const QpView& qp : view.qps) {
    parts.push_back(absl::StrFormat(
        "%s state %s, mtu %u, sq_psn 0x%x, rq_psn 0x%x, dest QP 0x%x, timeout %u, retry_cnt %u, "
        "rnr_retry %u, gid index %u",
        QpName(device, qp.qpn), qp.state, qp.path_mtu_bytes, qp.sq_psn, qp.rq_psn, qp.dest_qpn,
        qp.timeout, qp.retry_cnt, qp.rnr_retry, qp.sgid_index));
  }
  for (const std::string& error : view.qp_errors) parts.push_back(error);
  std::vector<std::string> counters;
  for (const char* name : kStallCounters) {
    const auto now = view.after.find(name);
    if (now == view.after.end()) continue;
    const auto then = view.before.find(name);
    if (then == view.before.end()) {
      counters.push_back(absl::StrCat(name, " ", now->second));
    } else {
      const auto delta = static_cast<int64_t>(now->second - then->second);
      counters.push_back(absl::StrCat(name, delta >= 0 ? " +" : " ", delta));
    }
  }
  if (!counters.empty()) {
    parts.push_back(
        absl::StrCat(device, " port ", port,
                     view.before.empty() ? " counters now: " : " counters over the run: ",
                     absl::StrJoin(counters, ", ")));
  } else if (!view.counters_error.empty()) {
    parts.push_back(
        absl::StrCat("no counters of ", device, " port ", port, " (", view.counters_error, ")"));
  }
  if (parts.empty()) return "";
  return absl::StrCat("; what the engine saw: ", absl::StrJoin(parts, "; "));
}

PortCounterMap DataPath::Counters() const {
  if (probe == nullptr || options == nullptr) return {};
  absl::StatusOr<PortCounterMap> counters = probe->ReadCounters(device, options->port);
  return counters.ok() ? *counters : PortCounterMap();
}

StallView DataPath::Observe(const PortCounterMap& before) const {
  StallView view;
  if (probe == nullptr) return view;
  for (ibv_qp* qp : qps) {
    absl::StatusOr<QpView> seen = probe->QueryQp(qp);
    if (seen.ok()) {
      view.qps.push_back(*seen);
    } else {
      view.qp_errors.push_back(std::string(seen.status().message()));
    }
  }
  absl::StatusOr<PortCounterMap> after = probe->ReadCounters(device, options->port);
  if (after.ok()) {
    view.after = *after;
    view.before = before;
  } else {
    view.counters_error = std::string(after.status().message());
  }
  return view;
}

absl::Status DataPath::PostData(size_t qp, uint64_t count, bool signaled) const {
  const uint64_t bytes = options->message_bytes;
  ibv_sge sge;
  std::memset(&sge, 0, sizeof(sge));
  sge.length = static_cast<uint32_t>(bytes);
  sge.lkey = lkey;
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = WorkId{WorkId::Kind::kData, static_cast<uint32_t>(qp), count}.Encode();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  switch (options->operation) {
    case VerbsTestOptions::Operation::kWrite:
      // Our send region to the peer's receive region (write_lat polls its last byte).
      sge.addr = local_address;
      wr.opcode = IBV_WR_RDMA_WRITE;
      wr.wr.rdma.remote_addr = remote_address + receive_offset();
      wr.wr.rdma.rkey = rkey;
      break;
    case VerbsTestOptions::Operation::kSend:
      sge.addr = local_address;
      wr.opcode = IBV_WR_SEND;
      break;
    case VerbsTestOptions::Operation::kRead:
      // The peer's send region into our receive region.
      sge.addr = local_address + receive_offset();
      wr.opcode = IBV_WR_RDMA_READ;
      wr.wr.rdma.remote_addr = remote_address;
      wr.wr.rdma.rkey = rkey;
      break;
  }
  if (options->operation != VerbsTestOptions::Operation::kRead && bytes <= max_inline) {
    wr.send_flags |= IBV_SEND_INLINE;
  }
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qps[qp], &wr, &bad);
  if (rc != 0) return PostFailure(*this, qp, "ibv_post_send", rc);
  return absl::OkStatus();
}

absl::Status DataPath::PostEnd(size_t qp, uint64_t count, EndReason reason) const {
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = WorkId{WorkId::Kind::kEnd, static_cast<uint32_t>(qp), count}.Encode();
  wr.sg_list = nullptr;
  wr.num_sge = 0;  // zero-length: only the immediate travels
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(EncodeEndOfTest(reason));
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(qps[qp], &wr, &bad);
  if (rc != 0) return PostFailure(*this, qp, "posting the end-of-test signal", rc);
  return absl::OkStatus();
}

absl::Status DataPath::PostReceive(size_t qp) const {
  ibv_sge sge;
  std::memset(&sge, 0, sizeof(sge));
  sge.addr = local_address + receive_offset();
  sge.length = static_cast<uint32_t>(options->message_bytes);
  sge.lkey = lkey;
  ibv_recv_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = WorkId{WorkId::Kind::kReceive, static_cast<uint32_t>(qp), 0}.Encode();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_recv(qps[qp], &wr, &bad);
  if (rc != 0) return PostFailure(*this, qp, "ibv_post_recv", rc);
  return absl::OkStatus();
}

absl::StatusOr<int> DataPath::Poll(ibv_wc* wcs, int max) const {
  const int found = ibv_poll_cq(cq, max, wcs);
  if (found < 0) {
    return absl::InternalError(absl::StrCat(device, ": ibv_poll_cq failed (", found,
                                            "): the completion queue overflowed or the device "
                                            "failed"));
  }
  return found;
}

absl::Status DataPath::Failure(const ibv_wc& wc) const {
  return CompletionFailure(device, wc.qp_num, wc.status, wc.vendor_err,
                           absl::FromChrono(Clock::now() - started), options->test);
}

absl::Status DataPath::Overrun(const std::string& doing) const {
  return absl::DeadlineExceededError(absl::StrFormat(
      "the verbs %s run on %s reached its deadline after %.1f s while %s: the deadline must "
      "exceed duration_s, or the peer stopped (check the peer's result)",
      options->test, device, std::chrono::duration<double>(Clock::now() - started).count(), doing));
}

absl::Status DataPath::NoProgress(const std::string& doing, Clock::duration quiet,
                                  const PortCounterMap& before) const {
  return absl::DeadlineExceededError(absl::StrCat(
      absl::StrFormat(
          "the verbs %s run on %s moved no data for %.1f s (after %.1f s, while %s): the link "
          "stopped carrying it (drops past the RC retries, a flapping port, frames larger than a "
          "hop's MTU) or the peer froze; check both ports' error counters and the peer's result "
          "(pairwise.no_progress_s sets how long a run may stall)",
          options->test, device, std::chrono::duration<double>(quiet).count(),
          std::chrono::duration<double>(Clock::now() - started).count(), doing),
      FormatStall(device, options->port, Observe(before))));
}

bool DataPath::MustStop(Clock::time_point now) const {
  return now >= deadline || (cancelled != nullptr && cancelled->load(std::memory_order_relaxed));
}

absl::Status DataPath::Stopped(const std::string& doing, const PortCounterMap& before) const {
  if (cancelled == nullptr || !cancelled->load(std::memory_order_relaxed)) return Overrun(doing);
  return absl::CancelledError(absl::StrFormat(
      "the verbs %s run on %s was stopped by the controller after %.1f s while %s: it closes a "
      "running end when the other end of the pair failed first or the run was interrupted, so "
      "the cause is in the peer's result or the controller's output%s",
      options->test, device, std::chrono::duration<double>(Clock::now() - started).count(), doing,
      FormatStall(device, options->port, Observe(before))));
}

}  // namespace clustercert::agent::peer
