#include "agent/inventory/verbs_port_attribute_source.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/ib_mtu.h"

namespace clustercert::agent::inventory {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;

struct ContextDeleter {
  void operator()(ibv_context* context) const { ibv_close_device(context); }
};
using Context = std::unique_ptr<ibv_context, ContextDeleter>;

std::string LinkLayerName(uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "Unspecified";
  }
}

// `device` is the name looked for, for the messages; `count` gets the list's length.
absl::StatusOr<DeviceList> ListDevices(const std::string& device, int& count) {
  errno = 0;
  DeviceList list(ibv_get_device_list(&count));
  if (list != nullptr) return list;
  const int err = errno;
  // ENOSYS: the kernel has no uverbs support at all, so there is no device.
  if (err == ENOSYS || err == ENOENT || err == 0) {
    return absl::NotFoundError(absl::StrCat("no RDMA device named ", device,
                                            ": libibverbs finds no RDMA support (",
                                            std::strerror(err == 0 ? ENOSYS : err), ")"));
  }
  return absl::UnavailableError(
      absl::StrCat("ibv_get_device_list failed looking for ", device, ": ", std::strerror(err)));
}

absl::StatusOr<ibv_device*> FindDevice(const DeviceList& list, int count,
                                       const std::string& device) {
  for (int i = 0; i < count; ++i) {
    const char* name = ibv_get_device_name(list.get()[i]);
    if (name != nullptr && device == name) return list.get()[i];
  }
  return absl::NotFoundError(absl::StrCat("no RDMA device named ", device, " (libibverbs lists ",
                                          count, " device", count == 1 ? "" : "s", ")"));
}

absl::StatusOr<Context> OpenDevice(ibv_device* found, const std::string& device) {
  errno = 0;
  Context context(ibv_open_device(found));
  if (context != nullptr) return context;
  const int err = errno == 0 ? EIO : errno;
  if (err == EACCES || err == EPERM) {
    // EACCES: the file mode; EPERM: the unit's device cgroup (DevicePolicy=closed).
    return absl::PermissionDeniedError(absl::StrCat(
        "ibv_open_device(", device, ") failed: ", std::strerror(err),
        ": the agent's user cannot open its /dev/infiniband/uverbs* file; rdma-core's udev rule "
        "makes it 0666, so where a site rule narrowed it add the clustercert user to the owning "
        "group (ls -l /dev/infiniband), and keep DeviceAllow=char-infiniband_verbs in "
        "deploy/clustercert-agent.service"));
  }
  return absl::UnavailableError(absl::StrCat("ibv_open_device(", device,
                                             ") failed: ", std::strerror(err),
                                             "; check /dev/infiniband permissions"));
}

absl::StatusOr<ibv_port_attr> QueryPort(ibv_context* context, const std::string& device,
                                        uint32_t port) {
  ibv_port_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  const int rc = ibv_query_port(context, static_cast<uint8_t>(port), &attr);
  if (rc == 0) return attr;
  const int err = rc > 0 ? rc : (errno != 0 ? errno : EIO);
  if (err == EINVAL) {
    return absl::NotFoundError(
        absl::StrCat(device, " has no port ", port, ": ibv_query_port: ", std::strerror(err)));
  }
  return absl::UnavailableError(
      absl::StrCat("ibv_query_port(", device, ", ", port, ") failed: ", std::strerror(err)));
}

absl::StatusOr<PortAttributes> ToPortAttributes(const ibv_port_attr& attr,
                                                const std::string& device, uint32_t port) {
  PortAttributes attributes;
  auto active = IbMtuToBytes(attr.active_mtu);
  if (!active.ok()) {
    return absl::DataLossError(absl::StrCat("ibv_query_port(", device, ", ", port,
                                            "): active_mtu: ", active.status().message()));
  }
  auto max = IbMtuToBytes(attr.max_mtu);
  if (!max.ok()) {
    return absl::DataLossError(absl::StrCat("ibv_query_port(", device, ", ", port,
                                            "): max_mtu: ", max.status().message()));
  }
  attributes.active_mtu_bytes = *active;
  attributes.source = "ibv_query_port";
  attributes.max_mtu_bytes = *max;
  attributes.state = static_cast<uint32_t>(attr.state);
  attributes.phys_state = attr.phys_state;
  attributes.lid = attr.lid;
  attributes.sm_lid = attr.sm_lid;
  attributes.link_layer = LinkLayerName(attr.link_layer);
  attributes.gid_table_len = static_cast<uint32_t>(attr.gid_tbl_len);
  return attributes;
}

}  // namespace

absl::StatusOr<PortAttributes> VerbsPortAttributeSource::Query(const std::string& device,
                                                               uint32_t port) {
  if (port == 0 || port > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", port, " of ", device, " is out of range: verbs ports are 1 .. 255"));
  }
  int count = 0;
  absl::StatusOr<DeviceList> list = ListDevices(device, count);
  if (!list.ok()) return list.status();
  absl::StatusOr<ibv_device*> found = FindDevice(*list, count, device);
  if (!found.ok()) return found.status();
  absl::StatusOr<Context> context = OpenDevice(*found, device);
  if (!context.ok()) return context.status();
  absl::StatusOr<ibv_port_attr> attr = QueryPort(context->get(), device, port);
  if (!attr.ok()) return attr.status();
  return ToPortAttributes(*attr, device, port);
}

}  // namespace clustercert::agent::inventory
