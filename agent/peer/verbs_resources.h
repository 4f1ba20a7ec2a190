#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

// One owning, move-only type per libibverbs object the verbs engine makes.
// Each is created by a StatusOr factory that either returns a live object or
// an error sentence naming the device and the fix; none exists half-built.
// An owner (VerbsEndpoint) holds them as members in rc_pingpong's order —
// buffer, context, PD, MR, CQ, QPs — so C++ destroys them in reverse. The
// destroy calls' return codes cannot be reported from a destructor; they only
// fail for objects still in use, which member order rules out.
namespace clustercert::agent::peer {

// ibv_get_device_list's result. A host without RDMA support (no uverbs) has
// an empty list rather than an error: the device simply is not there.
class DeviceList {
 public:
  static absl::StatusOr<DeviceList> Get();

  DeviceList(DeviceList&&) noexcept = default;
  DeviceList& operator=(DeviceList&&) noexcept = default;

  int size() const { return count_; }
  std::vector<std::string> names() const;
  // nullptr when no device has that name.
  ibv_device* Find(const std::string& name) const;

 private:
  struct Deleter {
    void operator()(ibv_device** list) const;
  };
  DeviceList(ibv_device** list, int count) : list_(list), count_(count) {}

  std::unique_ptr<ibv_device*, Deleter> list_;
  int count_ = 0;
};

// An open device (ibv_open_device). The device list is only needed to open it.
class Context {
 public:
  // NotFound "no RDMA device named mlx5_3; this host has: mlx5_0, mlx5_1".
  static absl::StatusOr<Context> Open(const std::string& name);

  Context(Context&&) noexcept = default;
  Context& operator=(Context&&) noexcept = default;

  ibv_context* get() const { return context_.get(); }
  const std::string& name() const { return name_; }

  // ibv_query_device, ibv_query_port, ibv_query_gid with sentences on failure.
  absl::StatusOr<ibv_device_attr> QueryDevice() const;
  absl::StatusOr<ibv_port_attr> QueryPort(uint32_t port) const;
  absl::StatusOr<ibv_gid> QueryGid(uint32_t port, uint32_t index) const;

 private:
  struct Deleter {
    void operator()(ibv_context* context) const;
  };
  Context(ibv_context* context, std::string name) : context_(context), name_(std::move(name)) {}

  std::unique_ptr<ibv_context, Deleter> context_;
  std::string name_;
};

class ProtectionDomain {
 public:
  static absl::StatusOr<ProtectionDomain> Allocate(const Context& context);

  ProtectionDomain(ProtectionDomain&&) noexcept = default;
  ProtectionDomain& operator=(ProtectionDomain&&) noexcept = default;

  ibv_pd* get() const { return pd_.get(); }

 private:
  struct Deleter {
    void operator()(ibv_pd* pd) const;
  };
  explicit ProtectionDomain(ibv_pd* pd) : pd_(pd) {}

  std::unique_ptr<ibv_pd, Deleter> pd_;
};

// A registered memory region: host memory (ibv_reg_mr, also GPU memory through
// nvidia-peermem) or a DMA-BUF (ibv_reg_dmabuf_mr).
class MemoryRegion {
 public:
  // `what` names the memory in messages: "host memory", "cuda:0 memory".
  static absl::StatusOr<MemoryRegion> Register(ibv_pd* pd, void* address, size_t bytes, int access,
                                               const std::string& what);
  // `iova` is the address the peer uses (the buffer's own address, so the
  // layout is the same as for ibv_reg_mr); `offset` is where the buffer
  // starts within the DMA-BUF.
  static absl::StatusOr<MemoryRegion> RegisterDmaBuf(ibv_pd* pd, uint64_t offset, size_t bytes,
                                                     uint64_t iova, int fd, int access,
                                                     const std::string& what);

  MemoryRegion(MemoryRegion&&) noexcept = default;
  MemoryRegion& operator=(MemoryRegion&&) noexcept = default;

  ibv_mr* get() const { return mr_.get(); }
  uint32_t lkey() const { return mr_->lkey; }
  uint32_t rkey() const { return mr_->rkey; }

 private:
  struct Deleter {
    void operator()(ibv_mr* mr) const;
  };
  explicit MemoryRegion(ibv_mr* mr) : mr_(mr) {}

  std::unique_ptr<ibv_mr, Deleter> mr_;
};

// A completion queue without a completion channel: the engine polls, so no
// wait can outlast its deadline.
class CompletionQueue {
 public:
  static absl::StatusOr<CompletionQueue> Create(const Context& context, int entries);

  CompletionQueue(CompletionQueue&&) noexcept = default;
  CompletionQueue& operator=(CompletionQueue&&) noexcept = default;

  ibv_cq* get() const { return cq_.get(); }

 private:
  struct Deleter {
    void operator()(ibv_cq* cq) const;
  };
  explicit CompletionQueue(ibv_cq* cq) : cq_(cq) {}

  std::unique_ptr<ibv_cq, Deleter> cq_;
};

// What the RTR transition needs to know about the remote side.
struct RemoteAddress {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint16_t lid = 0;        // InfiniBand
  bool global = false;     // RoCE: route by GID
  ibv_gid gid{};           // RoCE: the peer's GID
  uint8_t sgid_index = 0;  // RoCE: our GID table index
  // RoCE: the GRH traffic class (DSCP << 2 | ECN bits), which rxe and mlx5
  // copy into the IP TOS byte. 0 leaves the device's default, which is what
  // perftest sends without --tclass.
  uint8_t traffic_class = 0;
  uint8_t service_level = 0;  // InfiniBand: the SL (the SM maps it to a VL)
  ibv_mtu path_mtu = IBV_MTU_1024;
  uint8_t port = 1;
  uint8_t dest_rd_atomic = 1;  // RDMA READs we accept in flight
};

// An RC queue pair sharing one CQ for sends and receives.
class QueuePair {
 public:
  struct Capacity {
    uint32_t send_wr = 1;
    uint32_t recv_wr = 1;
    uint32_t inline_bytes = 0;  // requested; the device may refuse
  };
  // Retries once without inline data when the device refuses the request.
  static absl::StatusOr<QueuePair> Create(const Context& context, ibv_pd* pd, ibv_cq* cq,
                                          const Capacity& capacity);

  QueuePair(QueuePair&&) noexcept = default;
  QueuePair& operator=(QueuePair&&) noexcept = default;

  ibv_qp* get() const { return qp_.get(); }
  uint32_t qp_num() const { return qp_->qp_num; }
  uint32_t max_inline_data() const { return max_inline_data_; }

  // RESET -> INIT with the port and remote access flags.
  absl::Status ToInit(uint8_t port, int access);
  // INIT -> RTR with rc_pingpong's min_rnr_timer 12.
  absl::Status ToRtr(const RemoteAddress& remote);
  // RTR -> RTS: timeout 14 (~67 ms), retry_cnt 7, rnr_retry 7 (infinite).
  absl::Status ToRts(uint32_t sq_psn, uint8_t rd_atomic);

 private:
  struct Deleter {
    void operator()(ibv_qp* qp) const;
  };
  QueuePair(ibv_qp* qp, std::string device, uint32_t max_inline_data)
      : qp_(qp), device_(std::move(device)), max_inline_data_(max_inline_data) {}
  absl::Status Modify(ibv_qp_attr& attr, int mask, const char* transition);

  std::unique_ptr<ibv_qp, Deleter> qp_;
  std::string device_;
  uint32_t max_inline_data_ = 0;
};

}  // namespace clustercert::agent::peer
