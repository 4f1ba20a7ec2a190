#include "controller/checks/pcie_checks.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace clustercert::controller::checks {
namespace {

// "Gen4 x16", "Gen4", "x16" for the parts that are set.
std::string LinkText(bool has_gen, uint32_t gen, bool has_width, uint32_t width) {
  std::string text;
  if (has_gen) absl::StrAppend(&text, "Gen", gen);
  if (has_width) absl::StrAppend(&text, text.empty() ? "" : " ", "x", width);
  return text;
}

std::string ExpectedLink(const plan::PcieExpectation& pcie) {
  return LinkText(pcie.gen > 0, pcie.gen, pcie.width > 0, pcie.width);
}

v1::Finding EvaluateLink(const CheckContext& context, const FindingBuilder& builder,
                         const v1::PciFunction& function, bool is_gpu) {
  const plan::PcieExpectation& pcie = context.plan().expect.pcie;
  const std::string expected = ExpectedLink(pcie);
  if (pcie.gen > 0 && !function.has_current_gen()) {
    return builder.Unknown(
        ExplainMissing(function, {"current_gen", "current_link_speed", "current_speed_gts"}),
        "PCIe link speed", expected);
  }
  if (pcie.width > 0 && !function.has_current_width()) {
    return builder.Unknown(ExplainMissing(function, {"current_width", "current_link_width"}),
                           "PCIe link width", expected);
  }
  std::string current =
      LinkText(pcie.gen > 0, function.current_gen(), pcie.width > 0, function.current_width());
  std::string max = LinkText(function.has_max_gen(), function.max_gen(), function.has_max_width(),
                             function.max_width());
  std::string observed = max.empty() ? current : absl::StrCat(current, " (max ", max, ")");
  std::string message = absl::StrCat(builder.subject(), " at ", function.address(), " runs PCIe ",
                                     current, ", plan expects at least ", expected, ".");
  const bool gen_ok = pcie.gen <= 0 || static_cast<int>(function.current_gen()) >= pcie.gen;
  const bool width_ok = pcie.width <= 0 || static_cast<int>(function.current_width()) >= pcie.width;
  if (gen_ok && width_ok) return builder.Pass(observed, expected, message);

  const bool card_can_more =
      (!gen_ok && function.has_max_gen() && static_cast<int>(function.max_gen()) >= pcie.gen) ||
      (!width_ok && function.has_max_width() &&
       static_cast<int>(function.max_width()) >= pcie.width);
  if (is_gpu && width_ok && card_can_more) {
    return builder.FailWith(
        v1::Finding::warning, observed, expected, message,
        "GPUs lower their PCIe link speed when idle to save power: re-check under load "
        "(nvidia-smi -q -d PCI shows the current and max link); if it stays low, reseat the GPU "
        "in a full x16 slot wired to the CPU and check the riser and BIOS settings.");
  }
  std::string remedy =
      "Reseat the card in a full x16 slot wired to the CPU, and check the riser and the BIOS "
      "bifurcation setting";
  if (card_can_more) {
    absl::StrAppend(&remedy, ": the card itself reports ", max,
                    ", so the slot, riser or bifurcation is holding it back");
  }
  absl::StrAppend(&remedy,
                  is_gpu ? "." : ". A NIC short of PCIe bandwidth caps RDMA below line rate.");
  return builder.Fail(observed, expected, message, remedy);
}

const v1::PciFunction* FindNicFunction(const CheckContext& context, const v1::RdmaDevice& device) {
  if (const v1::PciFunction* function = context.FindPci("nic", device.name())) return function;
  for (const v1::PciFunction& function : context.inventory().pci()) {
    if (function.address() == device.pci_address()) return &function;
  }
  return nullptr;
}

v1::Finding CheckNic(const CheckContext& context, const v1::RdmaDevice& device) {
  FindingBuilder builder = context.Builder("pcie.nic", v1::Finding::error, device.name());
  if (device.pci_address().empty()) {
    return builder.Skipped(absl::StrCat(device.name(), " is a virtual device with no PCIe link"));
  }
  const v1::PciFunction* function = FindNicFunction(context, device);
  if (function == nullptr) {
    MissingFact missing =
        HasUnknown(context.inventory(), {"pci"})
            ? ExplainMissing(context.inventory(), {"pci"})
            : MissingBecause(absl::StrCat("no PCI function recorded for ", device.pci_address()));
    return builder.Unknown(missing, "PCIe link", ExpectedLink(context.plan().expect.pcie));
  }
  return EvaluateLink(context, builder, *function, /*is_gpu=*/false);
}

}  // namespace

void AppendPcieChecks(const CheckContext& context, std::vector<v1::Finding>& findings) {
  const plan::PcieExpectation& pcie = context.plan().expect.pcie;
  if (pcie.gen <= 0 && pcie.width <= 0) {
    for (const char* id : {"pcie.nic", "pcie.gpu"}) {
      findings.push_back(context.Builder(id, v1::Finding::error)
                             .Skipped("plan sets neither expect.pcie.gen nor expect.pcie.width"));
    }
    return;
  }
  if (context.is_rdma()) {
    for (const v1::RdmaDevice* device : context.PresentRails()) {
      findings.push_back(CheckNic(context, *device));
    }
  } else {
    findings.push_back(context.SkippedOnEthernet("pcie.nic", v1::Finding::error));
  }
  for (const v1::PciFunction* gpu : context.GpuFunctions()) {
    FindingBuilder builder = context.Builder("pcie.gpu", v1::Finding::error, gpu->name());
    findings.push_back(EvaluateLink(context, builder, *gpu, /*is_gpu=*/true));
  }
}

}  // namespace clustercert::controller::checks
