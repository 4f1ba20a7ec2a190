#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

// A software stand-in for two RC-connected ports, for testing the verbs data
// path without a device. ibv_post_send, ibv_post_recv and ibv_poll_cq are
// inline calls through ibv_context::ops, so fake contexts, CQs and QPs make
// them land here. Two sides, each with one CQ and `qps` QPs; QP i of side 0 is
// connected to QP i of side 1. Work requests execute at once and in order
// per QP, with RC semantics that matter to the engine:
//   - WRITE and READ copy between the sides' registered buffers and check the
//     rkey, lkey and bounds (REM_ACCESS_ERR / LOC_PROT_ERR otherwise);
//   - SEND waits (as RNR retry does) until the peer has a receive posted,
//     and a later request on the same QP waits behind it;
//   - only signaled requests make send completions; a send queue slot is
//     freed when the application polls a completion at or after it, so a
//     poster that signals too rarely finds the queue full (ENOMEM);
//   - a failed request breaks its QP: what follows is flushed;
//   - a CQ that overflows makes every later poll fail.
// Asynchronous, a "wire" thread carries requests out instead of the post
// call, so completions arrive later as from a device.
namespace clustercert::agent::peer::testing {

class FakeRc {
 public:
  struct Memory {
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint32_t lkey = 0;
    uint32_t rkey = 0;
  };

  FakeRc(int qps, uint32_t max_send_wr, uint32_t max_recv_wr, int cq_entries,
         bool asynchronous = false);
  ~FakeRc();
  FakeRc(const FakeRc&) = delete;
  FakeRc& operator=(const FakeRc&) = delete;

  ibv_cq* cq(int side);
  std::vector<ibv_qp*> qps(int side);
  void SetMemory(int side, const Memory& memory);

  // The next request `side` posts completes with `status`, breaking its QP.
  void FailNext(int side, ibv_wc_status status);
  // Requests `side` posts from now on are never carried out (a dead link).
  void Stall(int side);

 private:
  struct Qp;
  struct Side;
  struct Send {
    uint64_t wr_id = 0;
    ibv_wr_opcode opcode = IBV_WR_SEND;
    bool signaled = false;
    uint64_t local = 0;  // sge address
    uint32_t length = 0;
    uint32_t lkey = 0;
    uint64_t remote = 0;
    uint32_t rkey = 0;
    uint32_t imm = 0;  // network order, as posted
    uint64_t seq = 0;
    std::vector<uint8_t> inline_data;
  };
  struct Receive {
    uint64_t wr_id = 0;
    uint64_t address = 0;
    uint32_t length = 0;
    uint32_t lkey = 0;
  };

  static int PostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  static int PostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  static int PollCq(ibv_cq* cq, int entries, ibv_wc* wc);

  // Carries out `qp`'s queued requests until one has to wait. Holds mutex_.
  void Pump(Qp& qp);
  void Complete(Qp& qp, const Send& send, ibv_wc_status status);
  void Push(Side& side, const ibv_wc& wc, Qp* qp, std::optional<uint64_t> seq);
  bool Covers(const Memory& memory, uint64_t address, uint32_t length) const;

  std::mutex mutex_;
  std::vector<std::unique_ptr<Side>> sides_;
  int cq_entries_;
  bool asynchronous_;
  std::atomic<bool> stopping_{false};
  std::thread wire_;
};

}  // namespace clustercert::agent::peer::testing
