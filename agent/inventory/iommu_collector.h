#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// The IOMMU-related words of a kernel command line (intel_iommu=, amd_iommu=,
// iommu=, iommu.passthrough=, iommu.strict=), in order, at most 16.
std::vector<std::string> IommuCmdlineWords(absl::string_view cmdline);

// The mode the kernel runs the IOMMU in, from what the collector could see:
//   "off"          intel_iommu=off / amd_iommu=off / iommu=off, or no unit
//                  in /sys/class/iommu (units_known and units == 0)
//   "passthrough"  the GPUs' and NICs' IOMMU groups are "identity", or, with
//                  no group type readable, iommu=pt / iommu.passthrough=1
//   "translated"   units exist and a group is "DMA"/"DMA-FQ", or, with no
//                  group type readable, the command line asks for no passthrough
//   "unknown"      neither the units nor the command line could be read
// `group_types` are the iommu_group/type values read (may be empty).
std::string ClassifyIommu(const std::vector<std::string>& cmdline_words, bool cmdline_known,
                          int units, bool units_known, const std::vector<std::string>& group_types);

// Fills v1::Iommu from /proc/cmdline, /sys/class/iommu and the iommu_group/type
// of each function in `functions` (kernels >= 5.11 print "identity", "DMA" or
// "DMA-FQ" there; the group type is the truth, the command line only the
// request, and a kernel built with CONFIG_IOMMU_DEFAULT_PASSTHROUGH passes
// through with no word on it). It exists because a translating IOMMU puts
// every GPU<->NIC peer-to-peer DMA through the IOMMU and makes Linux enable
// ACS redirect on the PCIe switches (pcie.acs), the seed's "GPUDirect 5x
// slower".
class IommuCollector {
 public:
  explicit IommuCollector(const SysfsView& view) : view_(view) {}

  v1::Iommu Collect(const std::vector<v1::PciFunction>& functions) const;

 private:
  const SysfsView& view_;
};

}  // namespace clustercert::agent::inventory
