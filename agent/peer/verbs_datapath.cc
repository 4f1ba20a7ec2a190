#include "agent/peer/verbs_datapath.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/peer/verbs_resources.h"
#include "common/errno_text.h"

namespace clustercert::agent::peer {
namespace {

absl::Status PostFailure(const DataPath& path, size_t qp, const char* what, int rc) {
  return absl::InternalError(absl::StrCat(
      QpName(path.device, path.qps[qp]->qp_num), ": ", what, " failed: ", ErrnoText(rc),
      rc == ENOMEM ? " (the queue is full: an engine bug)" : ""));
}

}  // namespace

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

absl::Status DataPath::NoProgress(const std::string& doing, Clock::duration quiet) const {
  return absl::DeadlineExceededError(absl::StrFormat(
      "the verbs %s run on %s moved no data for %.1f s (after %.1f s, while %s): the link "
      "stopped carrying it (drops past the RC retries, a flapping port) or the peer froze; "
      "check both ports' error counters and the peer's result (pairwise.no_progress_s sets "
      "how long a run may stall)",
      options->test, device, std::chrono::duration<double>(quiet).count(),
      std::chrono::duration<double>(Clock::now() - started).count(), doing));
}

bool DataPath::MustStop(Clock::time_point now) const {
  return now >= deadline || (cancelled != nullptr && cancelled->load(std::memory_order_relaxed));
}

absl::Status DataPath::Stopped(const std::string& doing) const {
  if (cancelled == nullptr || !cancelled->load(std::memory_order_relaxed)) return Overrun(doing);
  return absl::CancelledError(absl::StrFormat(
      "the verbs %s run on %s was stopped by the controller after %.1f s while %s: it closes a "
      "running end when the other end of the pair failed first or the run was interrupted, so "
      "the cause is in the peer's result or the controller's output",
      options->test, device, std::chrono::duration<double>(Clock::now() - started).count(), doing));
}

}  // namespace clustercert::agent::peer
