#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/process/command_runner.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// The firmware settings kept from a query: those that decide whether the
// port speaks the fabric's protocol and how GPUDirect crosses PCIe.
inline constexpr absl::string_view kFirmwareSettingNames[] = {
    "LINK_TYPE_P1", "LINK_TYPE_P2",    "ATS_ENABLED",           "SRIOV_EN",
    "NUM_OF_VFS",   "PCI_WR_ORDERING", "ADVANCED_PCI_SETTINGS", "ROCE_CONTROL"};

// True for a lowercase "dddd:bb:dd.f" (function 0..7): the only form passed
// to mstconfig's command line.
bool IsPciAddressArgument(absl::string_view text);

// The kept settings of `mstconfig -d BDF q` / `mlxconfig -d BDF q` output, in
// the order printed. The "Configurations:" header names the value columns:
// one ("Next Boot", older tools) or "Default  Current  Next Boot" (newer);
// the "Current" column is taken when there is one, else the first. A leading
// '*' (value changed from its default) is ignored. InvalidArgument when there
// is no Configurations: table or no row in it parses.
absl::StatusOr<std::vector<v1::FirmwareSetting>> ParseMstconfigQuery(absl::string_view text);

// Reads each RDMA NIC's firmware configuration (ConnectX NV config). It
// exists because a VPI port left in the wrong LINK_TYPE, or ATS off where
// ACS redirect is on, breaks or slows the data path while the driver loads
// cleanly.
//
// On a live view it runs `mstconfig -d BDF q` (Debian's mstflint), or
// `mlxconfig -d BDF q` (NVIDIA MFT) where only that exists, through `runner`;
// on a captured tree it reads /clustercert-capture/mstconfig/BDF.txt. A card's
// functions share one configuration, so each card (dddd:bb:dd) is queried
// once and its other functions get the same settings. A NIC that could not
// be read has `error` set: the checks then report skipped, never pass.
class NicFirmwareCollector {
 public:
  static constexpr absl::Duration kQueryTimeout = absl::Seconds(20);

  // `runner` is used only when `view.is_live()`; both must outlive the collector.
  NicFirmwareCollector(const SysfsView& view, process::CommandRunner& runner)
      : view_(view), runner_(runner) {}

  std::vector<v1::NicFirmwareConfig> Collect(const std::vector<v1::RdmaDevice>& devices) const;

 private:
  struct Query {
    std::string tool;
    absl::StatusOr<std::string> text;
  };
  Query RunTool(const std::string& pci_address) const;
  Query ReadCapture(const std::string& pci_address) const;

  const SysfsView& view_;
  process::CommandRunner& runner_;
};

}  // namespace clustercert::agent::inventory
