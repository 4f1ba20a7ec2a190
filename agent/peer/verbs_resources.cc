#include "agent/peer/verbs_resources.h"

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/peer/verbs_protocol.h"
#include "common/errno_text.h"
#include "spdlog/spdlog.h"

namespace clustercert::agent::peer {
namespace {

// errno after a verbs call that reports failure through it; never 0, so a
// message never says "Success".
int LastErrno() { return errno != 0 ? errno : EIO; }

// The verbs teardown calls return an errno (ibv_close_device: -1 and errno).
// A failure leaves the resource with the driver until the agent exits, so an
// operator chasing leaked QPs or pinned memory needs the line.
void LogTeardownFailure(const char* call, int rc) {
  if (rc == 0) return;
  const int err = rc == -1 ? errno : rc;
  spdlog::warn(
      "verbs teardown: {} failed: {}; the device keeps the resource until node-agent exits "
      "(dmesg has the driver's reason)",
      call, ErrnoText(err));
}

}  // namespace

void Context::Deleter::operator()(ibv_context* context) const {
  LogTeardownFailure("ibv_close_device", ibv_close_device(context));
}
void ProtectionDomain::Deleter::operator()(ibv_pd* pd) const {
  LogTeardownFailure("ibv_dealloc_pd", ibv_dealloc_pd(pd));
}
void MemoryRegion::Deleter::operator()(ibv_mr* mr) const {
  LogTeardownFailure("ibv_dereg_mr", ibv_dereg_mr(mr));
}
void CompletionQueue::Deleter::operator()(ibv_cq* cq) const {
  LogTeardownFailure("ibv_destroy_cq", ibv_destroy_cq(cq));
}
void QueuePair::Deleter::operator()(ibv_qp* qp) const {
  LogTeardownFailure("ibv_destroy_qp", ibv_destroy_qp(qp));
}

void DeviceList::Deleter::operator()(ibv_device** list) const {
  if (list != nullptr) ibv_free_device_list(list);
}

absl::StatusOr<DeviceList> DeviceList::Get() {
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    const int err = errno;
    // ENOSYS: the kernel has no uverbs at all; ENOENT/0: nothing to list.
    // Either way this host has no RDMA device, which is not an error here.
    if (err == ENOSYS || err == ENOENT || err == 0) return DeviceList(nullptr, 0);
    return absl::UnavailableError(absl::StrCat("ibv_get_device_list failed: ", ErrnoText(err),
                                               "; check that rdma-core can read /sys/class/"
                                               "infiniband and /dev/infiniband"));
  }
  return DeviceList(list, count);
}

std::vector<std::string> DeviceList::names() const {
  std::vector<std::string> names;
  for (int i = 0; i < count_; ++i) {
    const char* name = ibv_get_device_name(list_.get()[i]);
    if (name != nullptr) names.emplace_back(name);
  }
  return names;
}

ibv_device* DeviceList::Find(const std::string& name) const {
  for (int i = 0; i < count_; ++i) {
    const char* device_name = ibv_get_device_name(list_.get()[i]);
    if (device_name != nullptr && name == device_name) return list_.get()[i];
  }
  return nullptr;
}

absl::StatusOr<Context> Context::Open(const std::string& name) {
  absl::StatusOr<DeviceList> list = DeviceList::Get();
  if (!list.ok()) return list.status();
  ibv_device* device = list->Find(name);
  if (device == nullptr) {
    const std::vector<std::string> names = list->names();
    if (names.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "no RDMA device named ", name,
          "; this host has none: load the NIC's RDMA driver (or rdma_rxe for soft-RoCE) and "
          "check `ibv_devices`"));
    }
    return absl::NotFoundError(absl::StrCat("no RDMA device named ", name,
                                            "; this host has: ", absl::StrJoin(names, ", ")));
  }
  errno = 0;
  ibv_context* context = ibv_open_device(device);
  if (context == nullptr) {
    return absl::UnavailableError(absl::StrCat("ibv_open_device(", name,
                                               ") failed: ", ErrnoText(LastErrno()),
                                               "; check the permissions of /dev/infiniband"));
  }
  // The context stays valid after the list is freed (rc_pingpong does the same).
  return Context(context, name);
}

absl::StatusOr<ibv_device_attr> Context::QueryDevice() const {
  ibv_device_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  errno = 0;
  const int rc = ibv_query_device(get(), &attr);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("ibv_query_device(", name_,
                                               ") failed: ", ErrnoText(rc > 0 ? rc : LastErrno())));
  }
  return attr;
}

absl::StatusOr<ibv_port_attr> Context::QueryPort(uint32_t port) const {
  ibv_port_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  errno = 0;
  const int rc = ibv_query_port(get(), static_cast<uint8_t>(port), &attr);
  if (rc != 0) {
    const int err = rc > 0 ? rc : LastErrno();
    if (err == EINVAL) {
      return absl::NotFoundError(absl::StrCat(name_, " has no port ", port,
                                              " (ibv_query_port: ", ErrnoText(err),
                                              "): use a port `ibv_devinfo -d ", name_, "` lists"));
    }
    return absl::UnavailableError(
        absl::StrCat("ibv_query_port(", name_, ", ", port, ") failed: ", ErrnoText(err)));
  }
  return attr;
}

absl::StatusOr<ibv_gid> Context::QueryGid(uint32_t port, uint32_t index) const {
  ibv_gid gid;
  std::memset(&gid, 0, sizeof(gid));
  errno = 0;
  const int rc = ibv_query_gid(get(), static_cast<uint8_t>(port), static_cast<int>(index), &gid);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("ibv_query_gid(", name_, ", port ", port, ", index ",
                                               index,
                                               ") failed: ", ErrnoText(rc > 0 ? rc : LastErrno())));
  }
  return gid;
}

absl::StatusOr<ProtectionDomain> ProtectionDomain::Allocate(const Context& context) {
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(context.get());
  if (pd == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ibv_alloc_pd(", context.name(), ") failed: ", ErrnoText(LastErrno())));
  }
  return ProtectionDomain(pd);
}

absl::StatusOr<MemoryRegion> MemoryRegion::Register(ibv_pd* pd, void* address, size_t bytes,
                                                    int access, const std::string& what) {
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(pd, address, bytes, access);
  if (mr == nullptr) {
    const int err = LastErrno();
    std::string hint;
    if (err == ENOMEM || err == EPERM) {
      hint =
          ": raise the locked-memory limit (ulimit -l, or LimitMEMLOCK=infinity in the "
          "agent's systemd unit)";
    } else if (err == EFAULT) {
      hint = ": the device cannot map this memory";
    }
    return absl::Status(err == ENOMEM ? absl::StatusCode::kResourceExhausted
                                      : absl::StatusCode::kFailedPrecondition,
                        absl::StrCat("ibv_reg_mr of ", bytes, " bytes of ", what,
                                     " failed: ", ErrnoText(err), hint));
  }
  return MemoryRegion(mr);
}

absl::StatusOr<MemoryRegion> MemoryRegion::RegisterDmaBuf(ibv_pd* pd, uint64_t offset, size_t bytes,
                                                          uint64_t iova, int fd, int access,
                                                          const std::string& what) {
  errno = 0;
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd, offset, bytes, iova, fd, access);
  if (mr == nullptr) {
    const int err = LastErrno();
    return absl::FailedPreconditionError(absl::StrCat(
        "ibv_reg_dmabuf_mr of ", bytes, " bytes of ", what, " failed: ", ErrnoText(err),
        err == EOPNOTSUPP || err == EPROTONOSUPPORT
            ? " (this kernel or RDMA driver has no DMA-BUF support)"
            : ""));
  }
  return MemoryRegion(mr);
}

absl::StatusOr<CompletionQueue> CompletionQueue::Create(const Context& context, int entries) {
  errno = 0;
  ibv_cq* cq = ibv_create_cq(context.get(), entries, nullptr, nullptr, 0);
  if (cq == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat("ibv_create_cq(", context.name(), ", ",
                                                     entries,
                                                     " entries) failed: ", ErrnoText(LastErrno())));
  }
  return CompletionQueue(cq);
}

absl::StatusOr<QueuePair> QueuePair::Create(const Context& context, ibv_pd* pd, ibv_cq* cq,
                                            const Capacity& capacity) {
  ibv_qp_init_attr init;
  std::memset(&init, 0, sizeof(init));
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;
  init.cap.max_send_wr = capacity.send_wr;
  init.cap.max_recv_wr = capacity.recv_wr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = capacity.inline_bytes;
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd, &init);
  if (qp == nullptr && capacity.inline_bytes > 0) {
    // Inline data only shortens latency; a device without it still runs the test.
    init.cap.max_inline_data = 0;
    errno = 0;
    qp = ibv_create_qp(pd, &init);
  }
  if (qp == nullptr) {
    const int err = LastErrno();
    return absl::ResourceExhaustedError(
        absl::StrCat("ibv_create_qp(", context.name(), ", RC, ", capacity.send_wr, " send and ",
                     capacity.recv_wr, " receive work requests) failed: ", ErrnoText(err),
                     err == EINVAL || err == ENOMEM ? ": lower queue_depth or streams" : ""));
  }
  return QueuePair(qp, context.name(), init.cap.max_inline_data);
}

absl::Status QueuePair::Modify(ibv_qp_attr& attr, int mask, const char* transition) {
  const int rc = ibv_modify_qp(get(), &attr, mask);
  if (rc == 0) return absl::OkStatus();
  const int err = rc > 0 ? rc : LastErrno();
  return absl::FailedPreconditionError(absl::StrCat(QpName(device_, qp_num()), ": ", transition,
                                                    " failed (ibv_modify_qp: ", ErrnoText(err),
                                                    ")"));
}

absl::Status QueuePair::ToInit(uint8_t port, int access) {
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port;
  attr.qp_access_flags = static_cast<unsigned int>(access);
  return Modify(attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                "RESET -> INIT");
}

absl::Status QueuePair::ToRtr(const RemoteAddress& remote) {
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = remote.path_mtu;
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = remote.dest_rd_atomic;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = remote.port;
  attr.ah_attr.sl = remote.service_level;
  attr.ah_attr.src_path_bits = 0;
  if (remote.global) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = remote.gid;
    attr.ah_attr.grh.sgid_index = remote.sgid_index;
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.grh.traffic_class = remote.traffic_class;
    attr.ah_attr.grh.flow_label = 0;
  } else {
    attr.ah_attr.is_global = 0;
    attr.ah_attr.dlid = remote.lid;
  }
  absl::Status status = Modify(attr,
                               IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                               "INIT -> RTR");
  if (status.ok()) return status;
  return absl::FailedPreconditionError(absl::StrCat(
      status.message(),
      remote.global
          ? ": check gid_index (it must name a populated RoCE GID of this port) and that the "
            "peer's GID is reachable through this port"
          : ": check that the peer's LID is on this subnet"));
}

absl::Status QueuePair::ToRts(uint32_t sq_psn, uint8_t rd_atomic) {
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.sq_psn = sq_psn;
  attr.max_rd_atomic = rd_atomic;
  return Modify(attr,
                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                "RTR -> RTS");
}

}  // namespace clustercert::agent::peer
