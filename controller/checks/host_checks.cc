#include "controller/checks/host_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "controller/checks/stack_checks.h"

namespace clustercert::controller::checks {
namespace {

constexpr char kOfedRemedy[] =
    "For anything carrying NCCL traffic in production install MLNX_OFED: sudo ./mlnxofedinstall "
    "--add-kernel-support --with-nvmf --force, then sudo /etc/init.d/openibd restart && sudo "
    "systemctl enable openibd. Upstream mlx5 works but lacks mlxconfig, the bundled perftest and "
    "a kernel-side nvidia-peermem tested against the same OFED tree; without "
    "--add-kernel-support the DKMS build fails silently on a kernel outside the OFED matrix and "
    "you end up on the inbox mlx5 without knowing it (check with dpkg -l | grep -E "
    "'libibverbs|rdma-core|mlnx-ofed').";

constexpr char kPeermemRemedy[] =
    "Load GPUDirect RDMA's peer-memory module: sudo modprobe nvidia-peermem, check lsmod | grep "
    "nvidia_peermem, and persist it with echo nvidia-peermem | sudo tee "
    "/etc/modules-load.d/nvidia-peermem.conf. If it will not load, reinstall in the order "
    "MLNX_OFED, then the NVIDIA driver, then nvidia-peermem: it is built against the OFED headers "
    "at install time. (On recent kernels DMA-BUF is NVIDIA's recommended alternative.) Without it "
    "GPU buffers go through host memory, up to 5x slower.";

constexpr char kNoGpudirectRemedy[] =
    "Give the NICs a way into GPU memory: load nvidia_peermem (sudo modprobe nvidia_peermem, "
    "persisted with echo nvidia-peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf; "
    "reinstall MLNX_OFED, then the NVIDIA driver, if it will not load), or use the open GPU "
    "kernel modules on a kernel >= 5.12 for DMA-BUF (driver >= 515, CUDA >= 11.7; NCCL picks it "
    "up by itself). Without either, GPU buffers go through host memory, up to 5x slower.";

constexpr char kUndecidedGpudirectRemedy[] =
    "Let the node-agent read /proc/sys/kernel/osrelease, /proc/driver/nvidia/version and "
    "/sys/module/nvidia_peermem (run it as root with the host's /proc and /sys) and re-run the "
    "inventory, or load nvidia_peermem (sudo modprobe nvidia_peermem), which settles it; an "
    "unknown never counts as a pass.";

constexpr char kMissingGpuRemedy[] =
    "Find the missing GPU: check nvidia-smi and dmesg for Xid 79 ('fallen off the bus'), reseat "
    "the card and its power cables, and check the BIOS (Above 4G decoding, slot bifurcation); if "
    "the node really has fewer GPUs, correct the plan's gpus.";

constexpr char kExtraGpuRemedy[] =
    "The node has more GPUs than the plan lists: correct the plan's gpus so collectives and "
    "topology checks cover every GPU.";

v1::Finding CheckOfed(const CheckContext& context) {
  FindingBuilder builder = context.Builder("stack.ofed", v1::Finding::warning);
  if (!context.plan().expect.ofed) return builder.Skipped("plan sets expect.ofed: false");
  const v1::Stack& stack = context.inventory().stack();
  if (!stack.ofed_version().empty()) {
    return builder.Pass(stack.ofed_version(), "MLNX_OFED",
                        absl::StrCat(builder.subject(), " runs ", stack.ofed_version(),
                                     ", plan expects MLNX_OFED."));
  }
  // An empty version is "not installed" unless the agent says it could not tell.
  if (HasUnknown(stack, {"ofed_version", "ofed"})) {
    return builder.Unknown(ExplainMissing(stack, {"ofed_version", "ofed"}), "MLNX_OFED version",
                           "MLNX_OFED");
  }
  std::string observed = stack.rdma_core_version().empty()
                             ? std::string("no MLNX_OFED")
                             : absl::StrCat("upstream rdma-core ", stack.rdma_core_version());
  return builder.Fail(
      observed, "MLNX_OFED",
      absl::StrCat(builder.subject(), " runs ", observed,
                   " without MLNX_OFED, plan expects MLNX_OFED for NCCL production."),
      kOfedRemedy);
}

// The judgement of inventories that carry gpudirect_mechanism: either
// mechanism NCCL can use for GPUDirect RDMA passes.
v1::Finding JudgeGpudirectMechanism(const FindingBuilder& builder, const v1::Stack& stack) {
  const std::string expected = "nvidia_peermem or dma-buf";
  const std::string& mechanism = stack.gpudirect_mechanism();
  if (mechanism == "nvidia_peermem" || mechanism == "dma-buf") {
    return builder.Pass(
        mechanism, expected,
        absl::StrCat(builder.subject(), " reaches GPU memory through ", mechanism, " (",
                     stack.gpudirect_source(), "), as the plan's GPUDirect RDMA expects."));
  }
  if (HasUnknown(stack, {"gpudirect_mechanism"})) {
    return builder.Unknown(ExplainMissing(stack, {"gpudirect_mechanism"}),
                           "GPUDirect RDMA mechanism", expected, kUndecidedGpudirectRemedy);
  }
  return builder.Fail(mechanism, expected,
                      absl::StrCat(builder.subject(), " has no GPUDirect RDMA mechanism (",
                                   stack.gpudirect_source(),
                                   "), plan expects nvidia_peermem or DMA-BUF for GPUDirect RDMA."),
                      kNoGpudirectRemedy);
}

v1::Finding CheckPeermem(const CheckContext& context) {
  FindingBuilder builder = context.Builder("gpudirect.peermem", v1::Finding::error);
  if (!context.is_rdma()) return context.SkippedOnEthernet("gpudirect.peermem", v1::Finding::error);
  if (!context.plan().expect.nvidia_peermem) {
    return builder.Skipped("plan sets expect.nvidia_peermem: false");
  }
  if (context.node().gpus <= 0) return builder.Skipped("plan lists no GPUs for this node");
  const v1::Stack& stack = context.inventory().stack();
  if (!stack.gpudirect_mechanism().empty()) return JudgeGpudirectMechanism(builder, stack);
  // An inventory from before gpudirect_mechanism: judged as it always was, so
  // older certificates verify to the same text.
  if (stack.peermem_loaded()) {
    std::string observed = stack.peermem_source().empty()
                               ? std::string("loaded")
                               : absl::StrCat("loaded (", stack.peermem_source(), ")");
    return builder.Pass(
        observed, "loaded",
        absl::StrCat(builder.subject(), " has nvidia_peermem loaded, as the plan expects."));
  }
  if (HasUnknown(stack, {"peermem_loaded", "peermem"})) {
    return builder.Unknown(ExplainMissing(stack, {"peermem_loaded", "peermem"}),
                           "nvidia_peermem state", "loaded");
  }
  std::string observed = stack.peermem_source().empty()
                             ? std::string("not loaded")
                             : absl::StrCat("not loaded (", stack.peermem_source(), ")");
  return builder.Fail(observed, "loaded",
                      absl::StrCat(builder.subject(),
                                   " does not have nvidia_peermem loaded, plan expects it loaded "
                                   "for GPUDirect RDMA."),
                      kPeermemRemedy);
}

v1::Finding CheckGpuCount(const CheckContext& context) {
  FindingBuilder builder = context.Builder("gpu.count", v1::Finding::error);
  const int planned = context.node().gpus;
  if (planned <= 0) return builder.Skipped("plan lists no GPUs for this node");
  const int found = static_cast<int>(context.GpuFunctions().size());
  std::string expected = absl::StrCat(planned, " GPUs");
  std::string observed = absl::StrCat(found, " GPUs on PCIe");
  if (found == 0 && HasUnknown(context.inventory(), {"pci"})) {
    return builder.Unknown(ExplainMissing(context.inventory(), {"pci"}), "GPU count", expected);
  }
  if (found == planned) {
    return builder.Pass(
        observed, expected,
        absl::StrCat(builder.subject(), " has ", observed, ", as the plan expects."));
  }
  std::string message =
      absl::StrCat(builder.subject(), " has ", observed, ", plan expects ", planned, ".");
  if (found < planned) return builder.Fail(observed, expected, message, kMissingGpuRemedy);
  return builder.FailWith(v1::Finding::warning, observed, expected, message, kExtraGpuRemedy);
}

}  // namespace

void AppendStackChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  AppendModuleChecks(context, findings);
  if (!context.is_rdma()) {
    findings.push_back(context.SkippedOnEthernet("stack.ofed", v1::Finding::warning));
    return;
  }
  findings.push_back(CheckOfed(context));
}

void AppendGpuChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  findings.push_back(CheckPeermem(context));
  findings.push_back(CheckGpuCount(context));
}

}  // namespace clustercert::controller::checks
