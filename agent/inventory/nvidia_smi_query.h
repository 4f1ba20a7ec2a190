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

// One GPU block of `nvidia-smi -q`: the lines a swapped GPU is named by.
struct NvidiaSmiGpu {
  std::string pci_address;    // "GPU 00000000:18:00.0" in sysfs spelling: "0000:18:00.0"
  std::string product_name;   // "NVIDIA H200"
  std::string serial_number;  // "1652023012345"; empty when nvidia-smi prints N/A
  std::string part_number;    // "Board Part Number": "692-2G520-0200-000"
  std::string uuid;           // "GPU-10f35015-..."
};

// The GPU blocks of `nvidia-smi -q` text. Each starts at a line
// "GPU 00000000:19:00.0" (no indentation) and holds "    Key : value" lines
// at four spaces (nested sections go deeper and are ignored). Values "N/A",
// "[N/A]" and "Unknown Error" read as empty. InvalidArgument when the text has
// no "==============NVSMI LOG==============" banner nor any GPU block, or a
// block's bus id is not a PCI address; at most 1024 GPUs are kept.
absl::StatusOr<std::vector<NvidiaSmiGpu>> ParseNvidiaSmiQuery(absl::string_view text);

// "00000000:DB:00.0" -> "0000:db:00.0"; InvalidArgument for anything else.
absl::StatusOr<std::string> NvidiaBusIdToPciAddress(absl::string_view bus_id);

// Names each GPU of an inventory by its board: fills Gpu.serial and
// part_number (gpu_runtime, matched by pci_bus_id) and, for the role "gpu"
// PCI functions whose VPD named nothing, serial_number, part_number,
// product_name and identity_source "nvidia-smi -q" (matched by address).
//
// On a live view `nvidia-smi -q` runs through `runner`; on a fixture or
// captured tree its output is read from /clustercert-capture/nvidia-smi-q.
// Nothing is asked when the inventory has no GPU. nvidia-smi missing, failing
// or printing garbage sets nothing and adds one Unknown ("gpu_identity") to
// the inventory.
class NvidiaSmiIdentity {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(60);
  static constexpr char kCapturePath[] = "/clustercert-capture/nvidia-smi-q";

  // `runner` may be null (nothing is run on a live view then); both must
  // outlive the object.
  NvidiaSmiIdentity(const SysfsView& view, process::CommandRunner* runner)
      : view_(view), runner_(runner) {}

  void Fill(v1::Inventory& inventory) const;

 private:
  absl::StatusOr<std::string> QueryText(std::string* origin) const;

  const SysfsView& view_;
  process::CommandRunner* runner_;
};

}  // namespace clustercert::agent::inventory
