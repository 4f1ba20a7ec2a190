#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clustercert/v1/inventory.pb.h"
#include "common/process/command_runner.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// One line of /proc/modules: "mlx5_ib 434176 0 - Live 0x0000000000000000".
struct ProcModule {
  std::string name;
  uint64_t size_bytes = 0;
  std::string state;  // "Live", "Loading", "Unloading"; empty when the line has no state column
};

// /proc/modules as parsed: the well-formed lines, and a description of each
// line that was not ("line 3: 'garbage'"), so a caller can say what it skipped.
struct ProcModules {
  std::vector<ProcModule> modules;
  std::vector<std::string> bad_lines;
};

ProcModules ParseProcModules(absl::string_view text);

// The version ofed_info -s prints, without its trailing ':'
// ("MLNX_OFED_LINUX-5.8-1.1.2.1:\n" -> "MLNX_OFED_LINUX-5.8-1.1.2.1");
// InvalidArgument for empty or multi-word text.
absl::StatusOr<std::string> ParseOfedInfo(absl::string_view text);

// The rdma-core release in a libibverbs file name: the soname's ABI numbers
// come first, the package version after them ("libibverbs.so.1.14.44.0" ->
// "44.0", MLNX_OFED's "libibverbs.so.1.14.58mlnx43" -> "58mlnx43").
absl::StatusOr<std::string> RdmaCoreVersionFromLibraryName(absl::string_view file_name);

// The real path of the libibverbs this process has loaded (dladdr on
// ibv_get_device_list, then realpath), e.g.
// "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0".
absl::StatusOr<std::string> LoadedLibibverbsPath();

// The NVIDIA kernel driver as the first line of /proc/driver/nvidia/version
// names it. The open GPU kernel modules print
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ...",
// the proprietary module "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  <date>".
struct NvidiaDriverBanner {
  std::string flavour;  // "open" | "proprietary"
  std::string version;  // "550.54.15"
};
absl::StatusOr<NvidiaDriverBanner> ParseNvidiaDriverBanner(absl::string_view text);

// The major and minor numbers of a kernel release ("6.8.0-45-generic" -> 6, 8).
struct KernelRelease {
  int major = 0;
  int minor = 0;
};
absl::StatusOr<KernelRelease> ParseKernelRelease(absl::string_view release);

// The NCCL release in a library file name ("libnccl.so.2.21.5" -> "2.21.5");
// InvalidArgument for anything but libnccl.so.2.<minor>.<patch>.
absl::StatusOr<std::string> NcclVersionFromLibraryName(absl::string_view file_name);

// Where NCCL's packages and the CUDA toolkit put libnccl.so.2, in the order
// they are searched; the first folder that has it is the one reported.
inline constexpr const char* kNcclLibraryDirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64",
    "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib64"};

// The kernel modules Stack reports, loaded or not.
inline constexpr const char* kStackModules[] = {
    "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_rxe", "nvidia", "nvidia_peermem"};

// Fills v1::Stack: the RDMA/GPU kernel modules (from /proc/modules, with each
// one's line there as its load rank, its /sys/module srcversion, whether it is
// built in, and the srcversion of the file modules.dep names for it), GPUDirect
// peer memory (nvidia_peermem's or the legacy nv_mem sysfs version file, or
// nvidia_peermem in /proc/modules), the MLNX_OFED release, the rdma-core
// release, the kernel release, the NVIDIA driver's version and flavour, the
// NCCL release the workers would load, and from these the GPUDirect mechanism:
// nvidia_peermem when loaded, else DMA-BUF when the kernel is >= 5.12 and the
// driver is the open GPU kernel module (NCCL's own rule), else none.
//
// A version file that is absent (no NVIDIA driver, a capture made before the
// capture tool recorded it) leaves its field empty without an Unknown: the
// consistency checks leave such a node out. One that exists but cannot be read
// or parsed is an Unknown.
//
// On a live view ofed_info -s runs through `runner` and rdma-core is read from
// the libibverbs this agent loaded. On a captured tree ofed_info's output is
// read from /clustercert-capture/ofed_info, and rdma-core is left unknown:
// the library loaded here belongs to the machine running the collector, not to
// the captured host.
class StackCollector {
 public:
  static constexpr absl::Duration kOfedInfoTimeout = absl::Seconds(10);

  // `runner` is used only when `view.is_live()`; both must outlive the collector.
  StackCollector(const SysfsView& view, process::CommandRunner& runner);

  v1::Stack Collect() const;

 private:
  void CollectModules(v1::Stack& stack, const absl::StatusOr<ProcModules>& proc_modules) const;
  void CollectSysModule(v1::KernelModule& module, bool listed) const;
  // The installed file of every loaded module (ModuleFileReader), once the
  // kernel release is known.
  void CollectModuleFiles(v1::Stack& stack) const;
  void CollectPeermem(v1::Stack& stack, const absl::StatusOr<ProcModules>& proc_modules) const;
  void CollectOfed(v1::Stack& stack) const;
  void CollectRdmaCore(v1::Stack& stack) const;
  // Each returns why its fact is missing, "" when it was read.
  std::string CollectKernelRelease(v1::Stack& stack) const;
  std::string CollectNvidiaDriver(v1::Stack& stack) const;
  void CollectGpudirect(v1::Stack& stack, const absl::StatusOr<ProcModules>& proc_modules,
                        absl::string_view kernel_missing, absl::string_view flavour_missing) const;
  void CollectNccl(v1::Stack& stack) const;

  const SysfsView& view_;
  process::CommandRunner& runner_;
};

}  // namespace clustercert::agent::inventory
