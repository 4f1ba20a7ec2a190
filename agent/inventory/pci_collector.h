#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// Describes the PCI functions that carry RDMA traffic: every RDMA NIC and
// every NVIDIA GPU, with their negotiated and maximum PCIe link and NUMA
// node. It exists because a NIC trained at x8 or Gen3, or a GPU on the other
// socket, halves GPUDirect bandwidth while every port still reads ACTIVE.
class PciCollector {
 public:
  static constexpr absl::string_view kRoleNic = "nic";
  static constexpr absl::string_view kRoleGpu = "gpu";

  explicit PciCollector(const SysfsView& view) : view_(view) {}

  // The NICs (role "nic", named after their RDMA device, in the order of
  // `rdma_devices`; virtual devices without a PCI function are skipped)
  // followed by the GPUs (role "gpu", "gpu0".."gpuN" in PCI address order).
  // An error only when /sys/bus/pci/devices exists but cannot be listed.
  absl::StatusOr<std::vector<v1::PciFunction>> Collect(
      const std::vector<v1::RdmaDevice>& rdma_devices) const;

  // One function per RDMA device with a `device` link to a PCI function.
  std::vector<v1::PciFunction> CollectNics(const std::vector<v1::RdmaDevice>& rdma_devices) const;

  // Every function on /sys/bus/pci/devices with vendor 0x10de and a display
  // class (0x03xxxx); NVSwitches (0x0680xx) and audio functions are not GPUs.
  // No /sys/bus/pci/devices means no GPUs.
  absl::StatusOr<std::vector<v1::PciFunction>> CollectGpus() const;

  // The function whose sysfs directory is `sysfs_dir` (a host path that may
  // be a symlink, e.g. /sys/bus/pci/devices/0000:41:00.0), with address,
  // sysfs_path, ids, link and NUMA node filled or explained by Unknowns.
  v1::PciFunction Describe(const std::string& sysfs_dir, absl::string_view role,
                           absl::string_view name) const;

 private:
  // `sysfs_dir`/`file` as text; nullopt after naming it as an unknown `field`.
  std::optional<std::string> ReadField(const std::string& sysfs_dir, absl::string_view file,
                                       absl::string_view field, v1::PciFunction& function) const;
  // Each fills its fields of `function` or explains them with unknowns.
  void ReadAddress(const std::string& sysfs_dir, v1::PciFunction& function) const;
  void ReadIds(const std::string& sysfs_dir, v1::PciFunction& function) const;
  void ReadLinkSpeeds(const std::string& sysfs_dir, v1::PciFunction& function) const;
  void ReadLinkWidths(const std::string& sysfs_dir, v1::PciFunction& function) const;
  void ReadNumaNode(const std::string& sysfs_dir, v1::PciFunction& function) const;

  const SysfsView& view_;
};

}  // namespace clustercert::agent::inventory
