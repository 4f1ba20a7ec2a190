#include "agent/capture/host_capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/capture/tree_writer.h"
#include "agent/inventory/captured_port_attribute_source.h"
#include "agent/inventory/dcb_netlink_source.h"
#include "agent/inventory/nvidia_smi_query.h"
#include "agent/inventory/pci_vpd.h"
#include "agent/inventory/stack_collector.h"
#include "agent/inventory/sysfs_formats.h"
#include "common/errno_text.h"
#include "common/process/process_command_runner.h"
#include "common/regular_file.h"
#include "common/unique_fd.h"
#include "common/version.h"

namespace clustercert::agent {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxConfigBytes = 4096;   // a PCIe config space
constexpr size_t kMaxToolBytes = 1 << 20;  // what process::ProcessCommandRunner keeps of a stream
constexpr size_t kMaxIfnameChars = 15;     // IFNAMSIZ - 1

constexpr char kCaptureDir[] = "/clustercert-capture";
constexpr char kNvidiaVendor[] = "0x10de";

// The files each kind of directory contributes; nothing else of it is read.
constexpr const char* kRdmaDeviceFiles[] = {"node_type", "node_guid", "sys_image_guid",
                                            "fw_ver",    "board_id",  "hca_type",
                                            "parent",    "node_desc"};
constexpr const char* kRdmaPortFiles[] = {"state", "phys_state", "rate",     "link_layer",
                                          "lid",   "sm_lid",     "cap_mask", "lid_mask_count"};
constexpr const char* kNetdevFiles[] = {"mtu", "operstate", "speed", "dev_port", "qos/trust"};
constexpr const char* kPciIdFiles[] = {"vendor", "device", "class"};
constexpr const char* kPciFunctionFiles[] = {"current_link_speed", "current_link_width",
                                             "max_link_speed", "max_link_width", "numa_node"};
// The RDMA and GPU modules whose sysfs entries the stack collector may read.
constexpr const char* kCaptureModules[] = {
    "mlx5_core",      "mlx5_ib",     "ib_core",    "ib_uverbs",  "rdma_rxe",      "rdma_cm",
    "rdma_ucm",       "ib_ipoib",    "ib_umad",    "mlx_compat", "mlxfw",         "nvidia",
    "nvidia_peermem", "nv_peer_mem", "nvidia_uvm", "nvidia_drm", "nvidia_modeset"};
constexpr const char* kModuleFiles[] = {"version", "refcnt", "initstate"};
constexpr const char* kSingleFiles[] = {"/proc/modules", "/proc/sys/kernel/osrelease",
                                        "/proc/driver/nvidia/version",
                                        "/sys/kernel/mm/memory_peers/nv_mem/version"};
// /proc/cmdline words whose name says they carry something secret.
constexpr const char* kSecretWords[] = {"pass", "key", "secret", "token", "cred"};

// The captured tool outputs, by where the capture readers look for them.
struct Tool {
  std::vector<std::string> argv;
  std::string path;  // host path under /clustercert-capture
};

bool IsPciAddressName(const std::string& name) {
  return !name.empty() && inventory::LastPciAddressInPath(name) == name;
}

// A name taken from a listing that is safe to join to a path.
bool IsPlainName(const std::string& name, size_t max_chars) {
  return !name.empty() && name.size() <= max_chars && name != "." && name != ".." &&
         name.find('/') == std::string::npos;
}

bool IsNumber(const std::string& name) {
  return !name.empty() && name.size() <= 9 && std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

std::string FirstLine(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) return std::string(line.substr(0, 120));
  }
  return "";
}

// The kernel command line without the words that may carry a secret.
std::string FilterCmdline(absl::string_view text, int* dropped) {
  std::vector<absl::string_view> kept;
  for (absl::string_view word : absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    const std::string name = absl::AsciiStrToLower(word.substr(0, word.find('=')));
    bool secret = false;
    for (const char* marker : kSecretWords) secret |= absl::StrContains(name, marker);
    if (secret) {
      ++*dropped;
    } else {
      kept.push_back(word);
    }
  }
  return absl::StrCat(absl::StrJoin(kept, " "), "\n");
}

// One capture run: walks the allow-list, then runs or copies the tools.
class CaptureRun {
 public:
  CaptureRun(const SysfsView& view, process::CommandRunner* runner, inventory::DcbSource* dcb,
             const CaptureOptions& options, const fs::path& out, CaptureReport& report)
      : view_(view),
        runner_(runner),
        dcb_(dcb),
        options_(options),
        writer_(view, out, report),
        report_(report) {}

  absl::Status Run() {
    CopyProc();
    CopyRdmaDevices();
    CopyNetdevs();
    CopyPci();
    CopyIommu();
    CopyLibraryNames();
    if (options_.run_tools) {
      RunTools();
    } else {
      CopyCapturedTools();
    }
    if (!writer_.write_error().empty()) return absl::InternalError(writer_.write_error());
    return absl::OkStatus();
  }

  TreeWriter& writer() { return writer_; }

 private:
  void CopyProc() {
    for (const char* path : kSingleFiles) writer_.CopyFile(path);
    for (const char* module : kCaptureModules) {
      for (const char* file : kModuleFiles) {
        writer_.CopyFile(absl::StrCat("/sys/module/", module, "/", file));
      }
    }
    auto cmdline = view_.ReadText("/proc/cmdline");
    if (cmdline.ok()) {
      int dropped = 0;
      writer_.WriteFile("/proc/cmdline", FilterCmdline(*cmdline, &dropped));
      if (dropped > 0) {
        report_.notes.push_back(absl::StrCat("/proc/cmdline: ", dropped,
                                             " word(s) naming a password, key, secret, token or "
                                             "credential left out"));
      }
    } else if (!absl::IsNotFound(cmdline.status())) {
      writer_.LeaveOut("/proc/cmdline", cmdline.status());
    }
  }

  // A class entry: the link (or, in odd trees, the directory itself).
  std::optional<std::string> Entry(const std::string& path) {
    if (auto target = writer_.CopyLink(path)) return target;
    auto resolved = view_.Resolve(path);
    if (resolved.ok() && view_.Exists(*resolved)) {
      writer_.MakeDir(*resolved);
      return *resolved;
    }
    return std::nullopt;
  }

  // The PCI function a device link leads to (or the function above it, for
  // an auxiliary device).
  void NoteFunctionOf(const std::string& device_dir) {
    const std::string link = absl::StrCat(device_dir, "/device");
    auto target = writer_.CopyLink(link);
    if (!target) return;
    std::string path = *target;
    while (path != "/" && !IsPciAddressName(BaseNameOf(path))) path = ParentOf(path);
    if (path != "/") nic_functions_.insert(path);
  }

  void CopyRdmaDevices() {
    for (const std::string& name : writer_.List("/sys/class/infiniband")) {
      auto dir = Entry(absl::StrCat("/sys/class/infiniband/", name));
      if (!dir) continue;
      ++rdma_devices_;
      for (const char* file : kRdmaDeviceFiles) writer_.CopyFile(absl::StrCat(*dir, "/", file));
      if (auto parent = view_.ReadText(absl::StrCat(*dir, "/parent"));
          parent.ok() && IsPlainName(*parent, kMaxIfnameChars)) {
        rdma_netdevs_.insert(*parent);  // a netdev name becomes a path under dcb/
      }
      NoteFunctionOf(*dir);
      for (const std::string& port : writer_.List(absl::StrCat(*dir, "/ports"))) {
        if (IsNumber(port)) CopyRdmaPort(absl::StrCat(*dir, "/ports/", port));
      }
      for (const std::string& tc : writer_.List(absl::StrCat(*dir, "/tc"))) {
        if (IsNumber(tc)) writer_.CopyFile(absl::StrCat(*dir, "/tc/", tc, "/traffic_class"));
      }
    }
  }

  void CopyRdmaPort(const std::string& port) {
    for (const char* file : kRdmaPortFiles) writer_.CopyFile(absl::StrCat(port, "/", file));
    for (const char* table : {"gids", "gid_attrs/types", "gid_attrs/ndevs"}) {
      const std::string dir = absl::StrCat(port, "/", table);
      for (const std::string& index : writer_.List(dir)) {
        if (IsNumber(index)) writer_.CopyFile(absl::StrCat(dir, "/", index));
      }
    }
    for (const std::string& index : writer_.List(absl::StrCat(port, "/gid_attrs/ndevs"))) {
      auto netdev = view_.ReadText(absl::StrCat(port, "/gid_attrs/ndevs/", index));
      if (netdev.ok() && IsPlainName(*netdev, kMaxIfnameChars)) rdma_netdevs_.insert(*netdev);
    }
    for (const char* counters : {"counters", "hw_counters"}) {
      const std::string dir = absl::StrCat(port, "/", counters);
      for (const std::string& name : writer_.List(dir)) {
        if (IsPlainName(name, 64)) writer_.CopyFile(absl::StrCat(dir, "/", name));
      }
    }
  }

  void CopyNetdevs() {
    for (const std::string& name : writer_.List("/sys/class/net")) {
      auto dir = Entry(absl::StrCat("/sys/class/net/", name));
      if (!dir) continue;
      for (const char* file : kNetdevFiles) writer_.CopyFile(absl::StrCat(*dir, "/", file));
      for (const char* side : {"roce_np", "roce_rp"}) {
        const std::string ecn = absl::StrCat(*dir, "/ecn/", side, "/enable");
        for (const std::string& priority : writer_.List(ecn)) {
          if (IsNumber(priority)) writer_.CopyFile(absl::StrCat(ecn, "/", priority));
        }
      }
      // The netdev's `device` link only: its PCI function is read in full
      // when an RDMA device or a GPU is on it.
      writer_.CopyLink(absl::StrCat(*dir, "/device"));
    }
  }

  void CopyPci() {
    constexpr char kDevices[] = "/sys/bus/pci/devices";
    std::set<std::string> full = nic_functions_;
    for (const std::string& address : writer_.List(kDevices)) {
      if (!IsPciAddressName(address)) continue;
      auto dir = Entry(absl::StrCat(kDevices, "/", address));
      if (!dir) continue;
      // Every function's ids: the GPU collector picks GPUs by vendor and class.
      for (const char* file : kPciIdFiles) writer_.CopyFile(absl::StrCat(*dir, "/", file));
      auto vendor = view_.ReadText(absl::StrCat(*dir, "/vendor"));
      if (vendor.ok() && absl::EqualsIgnoreCase(*vendor, kNvidiaVendor)) {
        full.insert(*dir);
        ++nvidia_functions_;
      }
    }
    std::set<std::string> done;
    for (const std::string& function : full) {
      // The function and every bridge above it: links, ACS and NUMA facts.
      for (std::string path = function; path != "/"; path = ParentOf(path)) {
        if (!IsPciAddressName(BaseNameOf(path))) continue;
        if (done.insert(path).second) CopyPciFunction(path);
      }
    }
  }

  void CopyPciFunction(const std::string& dir) {
    for (const char* file : kPciIdFiles) writer_.CopyFile(absl::StrCat(dir, "/", file));
    for (const char* file : kPciFunctionFiles) writer_.CopyFile(absl::StrCat(dir, "/", file));
    writer_.CopyFile(absl::StrCat(dir, "/config"), kMaxConfigBytes);
    writer_.CopyFile(absl::StrCat(dir, "/vpd"), inventory::kMaxPciVpdBytes);
    if (auto group = writer_.CopyLink(absl::StrCat(dir, "/iommu_group"))) {
      writer_.CopyFile(absl::StrCat(*group, "/type"));
    }
  }

  void CopyIommu() {
    for (const std::string& name : writer_.List("/sys/class/iommu")) {
      Entry(absl::StrCat("/sys/class/iommu/", name));
    }
  }

  // NCCL's version is read from its library's file name: the names of
  // libnccl.so* (links as links, files as empty placeholders), never a byte of
  // a library.
  void CopyLibraryNames() {
    std::set<std::string> seen;  // /usr/local/cuda/lib64 and targets/.../lib are often one folder
    for (const char* dir : inventory::kNcclLibraryDirs) {
      auto resolved = view_.Resolve(dir);
      if (!resolved.ok() || !view_.Exists(*resolved) || !seen.insert(*resolved).second) continue;
      for (const std::string& name : writer_.List(*resolved)) {
        if (!absl::StartsWith(name, "libnccl.so")) continue;
        const std::string path = absl::StrCat(*resolved, "/", name);
        if (writer_.CopyLink(path)) continue;
        std::error_code ec;
        if (fs::is_regular_file(fs::status(view_.HostPath(path), ec))) writer_.WriteFile(path, "");
      }
    }
  }

  // --- tools ----------------------------------------------------------------

  void RunTools() {
    if (runner_ == nullptr) {
      report_.notes.push_back("no command runner: no tool was run");
    } else {
      if (rdma_devices_ > 0) {
        RunTool({{"ibv_devinfo", "-v"}, inventory::CapturedPortAttributeSource::kPath});
      } else {
        report_.notes.push_back("ibv_devinfo -v: not run (no RDMA device)");
      }
      RunTool({{"ofed_info", "-s"}, absl::StrCat(kCaptureDir, "/ofed_info")});
      RunMstconfig();
      if (nvidia_functions_ > 0) {
        if (RunTool({{"nvidia-smi", "-q"}, inventory::NvidiaSmiIdentity::kCapturePath})) {
          RunTool({{"nvidia-smi", "topo", "-m"}, absl::StrCat(kCaptureDir, "/nvidia-smi-topo-m")});
        }
      } else {
        report_.notes.push_back("nvidia-smi: not run (no NVIDIA function on the PCI bus)");
      }
    }
    CaptureDcb();
  }

  // Returns false when the tool does not exist (so per-NIC loops stop).
  bool RunTool(const Tool& tool) {
    const std::string command = absl::StrJoin(tool.argv, " ");
    auto result = runner_->Run(tool.argv, options_.tool_timeout);
    if (!result.ok()) {
      report_.notes.push_back(
          absl::StrCat(command, ": ",
                       absl::IsNotFound(result.status()) ? "not found on this host (" : "failed (",
                       ReasonOf(result.status()), ")"));
      return !absl::IsNotFound(result.status());
    }
    if (result->exit_code != 0) {
      const std::string said = FirstLine(result->stderr_text).empty()
                                   ? FirstLine(result->stdout_text)
                                   : FirstLine(result->stderr_text);
      report_.notes.push_back(
          absl::StrCat(command, ": exited with status ", result->exit_code, ": '", said, "'"));
      return true;
    }
    if (result->stdout_text.size() > kMaxToolBytes) result->stdout_text.resize(kMaxToolBytes);
    if (writer_.WriteFile(tool.path, result->stdout_text)) {
      report_.tool_files.push_back(absl::StrCat(tool.path.substr(1), ": ", command, " (",
                                                result->stdout_text.size(), " bytes)"));
    }
    return true;
  }

  // The NIC firmware settings, as the firmware collector asks for them:
  // mstconfig (mstflint), else mlxconfig (MFT), into mstconfig/<pci>.txt.
  void RunMstconfig() {
    std::vector<std::string> tools = {"mstconfig", "mlxconfig"};
    for (const std::string& function : nic_functions_) {
      const std::string address = BaseNameOf(function);
      while (!tools.empty() &&
             !RunTool({{tools.front(), "-d", address, "q"},
                       absl::StrCat(kCaptureDir, "/mstconfig/", address, ".txt")})) {
        tools.erase(tools.begin());  // not installed: the next tool, for this NIC and the rest
      }
      if (tools.empty()) return;
    }
  }

  void CaptureDcb() {
    if (dcb_ == nullptr) {
      if (!rdma_netdevs_.empty()) report_.notes.push_back("DCB: no DCB source, PFC/DSCP not read");
      return;
    }
    for (const std::string& netdev : rdma_netdevs_) {
      auto settings = dcb_->Read(netdev);
      if (!settings.ok()) {
        report_.notes.push_back(absl::StrCat("DCB ", netdev, ": ", settings.status().message()));
        continue;
      }
      const std::string dir = absl::StrCat(kCaptureDir, "/dcb/", netdev);
      if (settings->pfc_enabled_mask.has_value()) {
        std::vector<int> priorities;
        for (int p = 0; p < 8; ++p) {
          if (*settings->pfc_enabled_mask & (1u << p)) priorities.push_back(p);
        }
        WriteToolFile(absl::StrCat(dir, "/pfc_enabled_priorities"),
                      absl::StrCat(absl::StrJoin(priorities, " "), "\n"), "DCB PFC");
      } else {
        report_.notes.push_back(absl::StrCat("DCB ", netdev, " PFC: ", settings->pfc_reason));
      }
      if (settings->dscp_priorities.has_value()) {
        std::string table;
        for (const auto& entry : *settings->dscp_priorities) {
          absl::StrAppend(&table, entry.dscp, " ", entry.priority, "\n");
        }
        WriteToolFile(absl::StrCat(dir, "/dscp_priorities"), table, "DCB app table (DSCP)");
      } else {
        report_.notes.push_back(absl::StrCat("DCB ", netdev, " DSCP: ", settings->dscp_reason));
      }
    }
  }

  void WriteToolFile(const std::string& path, const std::string& content, absl::string_view what) {
    if (writer_.WriteFile(path, content)) {
      report_.tool_files.push_back(
          absl::StrCat(path.substr(1), ": ", what, " (", content.size(), " bytes)"));
    }
  }

  // A capture of a capture: the source's tool outputs, by their known names.
  void CopyCapturedTools() {
    report_.notes.push_back(absl::StrCat("the source ", view_.root().string(),
                                         " is not the live host: no tool was run, its "
                                         "clustercert-capture/ files were copied"));
    for (const std::string& path : {std::string(inventory::CapturedPortAttributeSource::kPath),
                                    absl::StrCat(kCaptureDir, "/ofed_info"),
                                    std::string(inventory::NvidiaSmiIdentity::kCapturePath),
                                    absl::StrCat(kCaptureDir, "/nvidia-smi-topo-m")}) {
      CopyToolFile(path);
    }
    const std::string dcb = absl::StrCat(kCaptureDir, "/dcb");
    for (const std::string& netdev : writer_.List(dcb)) {
      if (!IsPlainName(netdev, kMaxIfnameChars)) continue;
      for (const char* file : {"pfc_enabled_priorities", "dscp_priorities"}) {
        CopyToolFile(absl::StrCat(dcb, "/", netdev, "/", file));
      }
    }
    const std::string mstconfig = absl::StrCat(kCaptureDir, "/mstconfig");
    for (const std::string& name : writer_.List(mstconfig)) {
      if (absl::EndsWith(name, ".txt") && IsPciAddressName(name.substr(0, name.size() - 4))) {
        CopyToolFile(absl::StrCat(mstconfig, "/", name));
      }
    }
  }

  void CopyToolFile(const std::string& path) {
    const uint64_t before = report_.bytes;
    const uint64_t files = report_.files;
    writer_.CopyFile(path, kMaxToolBytes);
    if (report_.files > files) {
      report_.tool_files.push_back(
          absl::StrCat(path.substr(1), ": copied (", report_.bytes - before, " bytes)"));
    }
  }

  const SysfsView& view_;
  process::CommandRunner* runner_;
  inventory::DcbSource* dcb_;
  const CaptureOptions& options_;
  TreeWriter writer_;
  CaptureReport& report_;
  std::set<std::string> nic_functions_;  // resolved PCI function dirs of the RDMA devices
  std::set<std::string> rdma_netdevs_;   // netdevs the RDMA ports name (QoS is read for them)
  int rdma_devices_ = 0;
  int nvidia_functions_ = 0;
};

std::string Readme(const SysfsView& view, const CaptureReport& report) {
  std::string text = absl::StrCat(
      "clustercert capture, written by node-agent ", kToolVersion, " --capture at ",
      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()), "\n",
      "source: ", view.root().string(), view.is_live() ? " (the live host)" : "", "\n\n",
      "This directory is a host as the node-agent reads it: run\n"
      "  node-agent --sysfs-root THIS_DIRECTORY --listen 127.0.0.1:0 --insecure\n"
      "and collect its inventory with the controller. It holds the sysfs/proc files the agent\n"
      "reads (an allow-list: no /etc, no environment, no process) and the tools' outputs below.\n"
      "Serial and part numbers (PCI VPD, nvidia-smi -q) are included on purpose.\n\n");
  absl::StrAppend(&text, "tool outputs:\n");
  if (report.tool_files.empty()) absl::StrAppend(&text, "  (none)\n");
  for (const auto& line : report.tool_files) absl::StrAppend(&text, "  ", line, "\n");
  absl::StrAppend(&text, "\nmissing or failed:\n");
  if (report.notes.empty()) absl::StrAppend(&text, "  (none)\n");
  for (const auto& line : report.notes) absl::StrAppend(&text, "  ", line, "\n");
  if (!report.left_out.empty()) {
    absl::StrAppend(&text, "\nleft out:\n");
    for (const auto& line : report.left_out) absl::StrAppend(&text, "  ", line, "\n");
  }
  return text;
}

// The directory a capture is written into, created when it does not exist.
// Refused unless root or the capturing user owns it and neither group nor
// others may write it (CheckTrustedOwnership, as for trusted keys): the
// owner of a directory handed to us (an attacker's empty one in /tmp) could
// otherwise replace any file of the capture after it is written, and the
// capture would certify their host. Returns its canonical
// path, checked to be the directory that was vetted.
absl::StatusOr<fs::path> PrepareDirectory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) {
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    // 0755 whatever the umask adds: group and others never write a capture.
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::UnavailableError(
          absl::StrCat("cannot create ", dir.string(), ": ", ErrnoText(errno)));
    }
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOTDIR) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir.string(), " exists and is not a directory: name a new directory"));
    }
    return absl::UnavailableError(
        absl::StrCat("cannot open ", dir.string(), ": ", ErrnoText(errno)));
  }
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot stat ", dir.string(), ": ", ErrnoText(errno)));
  }
  if (absl::Status owned = CheckTrustedOwnership(info, dir.string(), "capture directory",
                                                 "name a new directory (the capture creates it)");
      !owned.ok()) {
    return owned;
  }
  // One entry is enough to refuse the directory.
  absl::StatusOr<std::vector<std::string>> entries = ListOpenDirectory(
      fd.get(), dir.string(), "capture directory", [](absl::string_view) { return true; }, 0);
  if (!entries.ok() && !absl::IsResourceExhausted(entries.status())) return entries.status();
  if (!entries.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(),
                     " is not empty: a capture is written to a new or empty directory only, so "
                     "nothing of another host mixes in"));
  }
  // The writes go by path: make it the canonical path of the directory just
  // checked, so a symlink in the name cannot be pointed elsewhere afterwards.
  fs::path canonical = fs::canonical(dir, ec);
  struct stat named;
  if (ec || ::stat(canonical.c_str(), &named) != 0 || named.st_dev != info.st_dev ||
      named.st_ino != info.st_ino) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir.string(), " changed while it was being checked; name a new directory and run again"));
  }
  return canonical;
}

}  // namespace

absl::StatusOr<CaptureReport> HostCapture::Write(const fs::path& dir) const {
  absl::StatusOr<fs::path> out = PrepareDirectory(dir);
  if (!out.ok()) return out.status();
  CaptureReport report;
  CaptureRun run(view_, runner_, dcb_, options_, *out, report);
  if (auto status = run.Run(); !status.ok()) return status;
  // The README is written last so that it can list everything else.
  const std::string readme = Readme(view_, report);
  if (!run.writer().WriteFile(absl::StrCat(kCaptureDir, "/README.txt"), readme)) {
    return absl::InternalError(absl::StrCat("cannot write ",
                                            (dir / "clustercert-capture/README.txt").string(), ": ",
                                            run.writer().write_error()));
  }
  return report;
}

std::string CaptureSummary(const CaptureReport& report, const fs::path& dir) {
  std::string text = absl::StrCat("wrote ", dir.string(), ": ", report.files, " files, ",
                                  report.links, " links, ", report.bytes, " bytes\n");
  for (const auto& [area, counts] : report.areas) {
    absl::StrAppend(&text, "  ", area, ": ", counts.files, " files, ", counts.bytes, " bytes\n");
  }
  for (const auto& line : report.tool_files) absl::StrAppend(&text, "  ", line, "\n");
  for (const auto& line : report.notes) absl::StrAppend(&text, "  note: ", line, "\n");
  if (!report.left_out.empty()) {
    absl::StrAppend(&text, "  left out: ", report.left_out.size(),
                    " file(s), listed in clustercert-capture/README.txt\n");
  }
  return text;
}

int RunHostCapture(const std::string& sysfs_root, const std::string& dir) {
  SysfsView view(sysfs_root);
  process::ProcessCommandRunner runner;
  inventory::DcbNetlinkSource dcb;
  CaptureOptions options;
  options.run_tools = view.is_live();
  HostCapture capture(view, view.is_live() ? &runner : nullptr, view.is_live() ? &dcb : nullptr,
                      options);
  auto report = capture.Write(dir);
  if (!report.ok()) {
    std::fprintf(stderr, "node-agent --capture: %s\n",
                 std::string(report.status().message()).c_str());
    return 1;
  }
  std::fputs(CaptureSummary(*report, dir).c_str(), stdout);
  return 0;
}

}  // namespace clustercert::agent
