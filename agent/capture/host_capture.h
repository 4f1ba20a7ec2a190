#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/inventory/dcb_source.h"
#include "common/process/command_runner.h"
#include "common/sysfs_view.h"

namespace clustercert::agent {

struct CaptureOptions {
  // Run the tools (ibv_devinfo -v, ofed_info -s, mstconfig/mlxconfig q, nvidia-smi -q
  // and topo -m) and ask DCB for PFC/DSCP. Off, the source's own
  // clustercert-capture/ files are copied instead: capturing a capture.
  bool run_tools = true;
  absl::Duration tool_timeout = absl::Seconds(60);
};

// What a capture wrote, for the printout and README.txt.
struct CaptureReport {
  struct Area {
    uint64_t files = 0;
    uint64_t bytes = 0;
  };
  uint64_t files = 0;
  uint64_t links = 0;
  uint64_t bytes = 0;
  std::map<std::string, Area> areas;  // "sys/devices", "proc/modules", "clustercert-capture"
  std::vector<std::string>
      tool_files;                  // "clustercert-capture/ibv_devinfo: ibv_devinfo -v (8123 bytes)"
  std::vector<std::string> notes;  // a tool that is missing or failed, and why
  std::vector<std::string> left_out;  // "/sys/...: why it was not copied"
};

// Writes a tree that `--sysfs-root` accepts and that holds exactly what the
// agent's collectors read from this host, so a customer can send one
// directory and the inventory can be collected, diffed and debugged elsewhere.
//
// Nothing outside an explicit allow-list is copied: the RDMA devices of
// /sys/class/infiniband (identity, ports, GIDs, counters, traffic class), the
// netdevs of /sys/class/net (MTU, state, speed, ECN, trust), every function
// of /sys/bus/pci/devices by its ids, and the NIC and NVIDIA functions and
// the bridges above them in full (link, NUMA node, config space, VPD,
// IOMMU group type), the RDMA/GPU kernel modules' versions, /proc/modules,
// /proc/cmdline (words naming a password, key, secret, token or credential
// dropped), the kernel release, the NVIDIA driver banner, /sys/class/iommu,
// and the names (never the contents) of libnccl.so* in NCCL's library
// folders. No /etc, no environment, no /proc/<pid>. Symlinks are recreated as
// relative links to where they resolve, the way the kernel makes them. Files
// over 64 KiB are left out (config and vpd may reach their own sizes), and so
// is anything that is not a regular file (a FIFO, a device, a socket), named
// in left_out: the source is read through SysfsView, which refuses them.
//
// Tool outputs go under clustercert-capture/ in the formats the capture
// readers expect: ibv_devinfo, ofed_info, dcb/<netdev>/{pfc_enabled_priorities,
// dscp_priorities}, mstconfig/<pci>.txt (mstconfig, else mlxconfig),
// nvidia-smi-q and nvidia-smi-topo-m, each run with a fixed argv (no shell)
// and a timeout; a missing tool is a line in clustercert-capture/README.txt,
// not an error.
class HostCapture {
 public:
  // `runner` and `dcb` may be null (their outputs are then noted missing).
  HostCapture(const SysfsView& view, process::CommandRunner* runner, inventory::DcbSource* dcb,
              CaptureOptions options)
      : view_(view), runner_(runner), dcb_(dcb), options_(options) {}

  // Writes the tree under `dir`, which must not exist (it is created, mode
  // 0755) or be an empty directory that the capturing user owns and that
  // group and others cannot write: whoever else could write it could change
  // the capture afterwards. Errors: FailedPrecondition for a non-empty or
  // non-directory `dir`, PermissionDenied for one owned by another user or
  // writable by group or others (naming the owner or mode and the fix), the
  // filesystem's error when it cannot be created or written.
  absl::StatusOr<CaptureReport> Write(const std::filesystem::path& dir) const;

 private:
  const SysfsView& view_;
  process::CommandRunner* runner_;
  inventory::DcbSource* dcb_;
  CaptureOptions options_;
};

// The printout of `node-agent --capture`: totals, bytes per area, each tool
// output, each note.
std::string CaptureSummary(const CaptureReport& report, const std::filesystem::path& dir);

// `node-agent --capture DIR [--sysfs-root ROOT]`: live tools when ROOT is
// "/", the source's captured outputs otherwise; prints the summary and returns
// the process exit status (0, or 1 with the reason on stderr).
int RunHostCapture(const std::string& sysfs_root, const std::string& dir);

}  // namespace clustercert::agent
