#include "tests/unit/agent/peer/fake_rc.h"

#include <cerrno>
#include <cstring>

namespace clustercert::agent::peer::testing {

struct FakeRc::Qp {
  ibv_qp qp{};
  FakeRc* fake = nullptr;
  Side* side = nullptr;
  Qp* peer = nullptr;
  uint32_t max_send = 0;
  uint32_t max_recv = 0;
  uint64_t next_seq = 0;  // send requests posted
  uint64_t freed = 0;     // send slots freed by polled completions
  std::deque<Send> sends;
  std::deque<Receive> receives;
  bool broken = false;
};

struct FakeRc::Side {
  ibv_context context{};
  ibv_cq cq{};
  struct Entry {
    ibv_wc wc;
    Qp* qp;
    std::optional<uint64_t> seq;  // send completions free the queue up to here
  };
  std::deque<Entry> entries;
  bool overflowed = false;
  std::vector<std::unique_ptr<Qp>> qps;
  Memory memory;
  bool stalled = false;
  std::optional<ibv_wc_status> fail_next;
};

FakeRc::FakeRc(int qps, uint32_t max_send_wr, uint32_t max_recv_wr, int cq_entries,
               bool asynchronous)
    : cq_entries_(cq_entries), asynchronous_(asynchronous) {
  for (int s = 0; s < 2; ++s) {
    auto side = std::make_unique<Side>();
    side->context.ops.post_send = &FakeRc::PostSend;
    side->context.ops.post_recv = &FakeRc::PostRecv;
    side->context.ops.poll_cq = &FakeRc::PollCq;
    side->cq.context = &side->context;
    side->cq.cq_context = side.get();
    side->cq.cqe = cq_entries;
    for (int i = 0; i < qps; ++i) {
      auto qp = std::make_unique<Qp>();
      qp->fake = this;
      qp->side = side.get();
      qp->max_send = max_send_wr;
      qp->max_recv = max_recv_wr;
      qp->qp.context = &side->context;
      qp->qp.qp_context = qp.get();
      qp->qp.qp_num = static_cast<uint32_t>((s + 1) * 0x100 + i);
      qp->qp.send_cq = &side->cq;
      qp->qp.recv_cq = &side->cq;
      qp->qp.qp_type = IBV_QPT_RC;
      qp->qp.state = IBV_QPS_RTS;
      side->qps.push_back(std::move(qp));
    }
    sides_.push_back(std::move(side));
  }
  for (int i = 0; i < qps; ++i) {
    sides_[0]->qps[i]->peer = sides_[1]->qps[i].get();
    sides_[1]->qps[i]->peer = sides_[0]->qps[i].get();
  }
  if (asynchronous_) {
    wire_ = std::thread([this] {
      while (!stopping_.load()) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          for (auto& side : sides_) {
            for (auto& qp : side->qps) Pump(*qp);
          }
        }
        std::this_thread::yield();
      }
    });
  }
}

FakeRc::~FakeRc() {
  stopping_.store(true);
  if (wire_.joinable()) wire_.join();
}

ibv_cq* FakeRc::cq(int side) { return &sides_[side]->cq; }

std::vector<ibv_qp*> FakeRc::qps(int side) {
  std::vector<ibv_qp*> qps;
  for (auto& qp : sides_[side]->qps) qps.push_back(&qp->qp);
  return qps;
}

void FakeRc::SetMemory(int side, const Memory& memory) {
  std::lock_guard<std::mutex> lock(mutex_);
  sides_[side]->memory = memory;
}

void FakeRc::FailNext(int side, ibv_wc_status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  sides_[side]->fail_next = status;
}

void FakeRc::Stall(int side) {
  std::lock_guard<std::mutex> lock(mutex_);
  sides_[side]->stalled = true;
}

bool FakeRc::Covers(const Memory& memory, uint64_t address, uint32_t length) const {
  return address >= memory.address && address + length <= memory.address + memory.bytes;
}

void FakeRc::Push(Side& side, const ibv_wc& wc, Qp* qp, std::optional<uint64_t> seq) {
  if (static_cast<int>(side.entries.size()) >= cq_entries_) {
    side.overflowed = true;
    return;
  }
  side.entries.push_back({wc, qp, seq});
}

void FakeRc::Complete(Qp& qp, const Send& send, ibv_wc_status status) {
  if (!send.signaled && status == IBV_WC_SUCCESS) return;
  ibv_wc wc{};
  wc.wr_id = send.wr_id;
  wc.status = status;
  wc.qp_num = qp.qp.qp_num;
  wc.byte_len = send.length;
  switch (send.opcode) {
    case IBV_WR_RDMA_WRITE:
      wc.opcode = IBV_WC_RDMA_WRITE;
      break;
    case IBV_WR_RDMA_READ:
      wc.opcode = IBV_WC_RDMA_READ;
      break;
    default:
      wc.opcode = IBV_WC_SEND;
  }
  Push(*qp.side, wc, &qp, send.seq);
}

void FakeRc::Pump(Qp& qp) {
  while (!qp.sends.empty()) {
    Send& send = qp.sends.front();
    if (qp.broken) {
      Complete(qp, send, IBV_WC_WR_FLUSH_ERR);
      qp.sends.pop_front();
      continue;
    }
    Side& side = *qp.side;
    if (side.stalled) return;
    if (side.fail_next.has_value()) {
      Complete(qp, send, *side.fail_next);
      side.fail_next.reset();
      qp.broken = true;
      qp.sends.pop_front();
      continue;
    }
    const Memory& local = side.memory;
    const Memory& remote = qp.peer->side->memory;
    const bool local_ok = send.length == 0 || !send.inline_data.empty() ||
                          (send.lkey == local.lkey && Covers(local, send.local, send.length));
    if (!local_ok) {
      Complete(qp, send, IBV_WC_LOC_PROT_ERR);
      qp.broken = true;
      qp.sends.pop_front();
      continue;
    }
    const void* source = send.inline_data.empty() ? reinterpret_cast<const void*>(send.local)
                                                  : send.inline_data.data();
    switch (send.opcode) {
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_READ:
        if (send.rkey != remote.rkey || !Covers(remote, send.remote, send.length)) {
          Complete(qp, send, IBV_WC_REM_ACCESS_ERR);
          qp.broken = true;
          qp.sends.pop_front();
          continue;
        }
        if (send.opcode == IBV_WR_RDMA_WRITE) {
          std::memmove(reinterpret_cast<void*>(send.remote), source, send.length);
        } else {
          std::memmove(reinterpret_cast<void*>(send.local),
                       reinterpret_cast<const void*>(send.remote), send.length);
        }
        break;
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM: {
        Qp& peer = *qp.peer;
        if (peer.receives.empty()) return;  // RNR: retried when a receive is posted
        const Receive receive = peer.receives.front();
        peer.receives.pop_front();
        ibv_wc wc{};
        wc.wr_id = receive.wr_id;
        wc.qp_num = peer.qp.qp_num;
        wc.opcode = IBV_WC_RECV;
        wc.byte_len = send.length;
        if (send.length > receive.length) {
          wc.status = IBV_WC_LOC_LEN_ERR;
          Push(*peer.side, wc, &peer, std::nullopt);
          peer.broken = true;
          Complete(qp, send, IBV_WC_REM_INV_REQ_ERR);
          qp.broken = true;
          qp.sends.pop_front();
          continue;
        }
        if (send.length > 0) {
          std::memmove(reinterpret_cast<void*>(receive.address), source, send.length);
        }
        wc.status = IBV_WC_SUCCESS;
        if (send.opcode == IBV_WR_SEND_WITH_IMM) {
          wc.wc_flags = IBV_WC_WITH_IMM;
          wc.imm_data = send.imm;
        }
        Push(*peer.side, wc, &peer, std::nullopt);
        break;
      }
      default:
        Complete(qp, send, IBV_WC_LOC_QP_OP_ERR);
        qp.broken = true;
        qp.sends.pop_front();
        continue;
    }
    Complete(qp, send, IBV_WC_SUCCESS);
    qp.sends.pop_front();
  }
}

int FakeRc::PostSend(ibv_qp* ibv_qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  Qp& qp = *static_cast<Qp*>(ibv_qp->qp_context);
  std::lock_guard<std::mutex> lock(qp.fake->mutex_);
  for (; wr != nullptr; wr = wr->next) {
    if (qp.next_seq - qp.freed >= qp.max_send || wr->num_sge > 1) {
      *bad = wr;
      return ENOMEM;
    }
    Send send;
    send.wr_id = wr->wr_id;
    send.opcode = wr->opcode;
    send.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
    if (wr->num_sge == 1) {
      send.local = wr->sg_list[0].addr;
      send.length = wr->sg_list[0].length;
      send.lkey = wr->sg_list[0].lkey;
      if ((wr->send_flags & IBV_SEND_INLINE) != 0) {
        const auto* data = reinterpret_cast<const uint8_t*>(send.local);
        send.inline_data.assign(data, data + send.length);
      }
    }
    send.remote = wr->wr.rdma.remote_addr;
    send.rkey = wr->wr.rdma.rkey;
    send.imm = wr->imm_data;
    send.seq = qp.next_seq++;
    qp.sends.push_back(std::move(send));
  }
  if (!qp.fake->asynchronous_) qp.fake->Pump(qp);
  return 0;
}

int FakeRc::PostRecv(ibv_qp* ibv_qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Qp& qp = *static_cast<Qp*>(ibv_qp->qp_context);
  std::lock_guard<std::mutex> lock(qp.fake->mutex_);
  for (; wr != nullptr; wr = wr->next) {
    if (qp.receives.size() >= qp.max_recv || wr->num_sge > 1) {
      *bad = wr;
      return ENOMEM;
    }
    Receive receive;
    receive.wr_id = wr->wr_id;
    if (wr->num_sge == 1) {
      receive.address = wr->sg_list[0].addr;
      receive.length = wr->sg_list[0].length;
      receive.lkey = wr->sg_list[0].lkey;
    }
    qp.receives.push_back(receive);
  }
  if (!qp.fake->asynchronous_) qp.fake->Pump(*qp.peer);  // a send waiting for it goes now
  return 0;
}

int FakeRc::PollCq(ibv_cq* cq, int entries, ibv_wc* wc) {
  Side& side = *static_cast<Side*>(cq->cq_context);
  Qp& any = *side.qps.front();
  std::lock_guard<std::mutex> lock(any.fake->mutex_);
  if (side.overflowed) return -EOVERFLOW;
  int found = 0;
  while (found < entries && !side.entries.empty()) {
    const Side::Entry& entry = side.entries.front();
    wc[found++] = entry.wc;
    if (entry.seq.has_value() && *entry.seq + 1 > entry.qp->freed) entry.qp->freed = *entry.seq + 1;
    side.entries.pop_front();
  }
  return found;
}

}  // namespace clustercert::agent::peer::testing
