#include "agent/inventory/nvidia_smi_query.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/inventory/unknowns.h"
#include "common/message_text.h"

namespace clustercert::agent::inventory {
namespace {

constexpr absl::string_view kBanner = "==============NVSMI LOG==============";
constexpr absl::string_view kGpuPrefix = "GPU ";
constexpr absl::string_view kFieldIndent = "    ";
constexpr size_t kMaxGpus = 1024;
constexpr size_t kMaxQuotedChars = 80;

std::string Quoted(absl::string_view text) { return QuotedText(text, kMaxQuotedChars); }

bool IsHex(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// nvidia-smi's words for "no value".
std::string ValueOrEmpty(absl::string_view value) {
  if (value == "N/A" || value == "[N/A]" || value == "Unknown Error" ||
      value == "[Unknown Error]") {
    return "";
  }
  return std::string(value);
}

}  // namespace

absl::StatusOr<std::string> NvidiaBusIdToPciAddress(absl::string_view bus_id) {
  bus_id = absl::StripAsciiWhitespace(bus_id);
  std::vector<absl::string_view> parts = absl::StrSplit(bus_id, ':');
  absl::string_view device_function = parts.size() == 3 ? parts[2] : "";
  auto dot = device_function.find('.');
  if (parts.size() != 3 || !IsHex(parts[0]) || parts[0].size() > 8 || parts[1].size() != 2 ||
      !IsHex(parts[1]) || dot != 2 || device_function.size() != 4 ||
      !IsHex(device_function.substr(0, 2)) || !IsHex(device_function.substr(3))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unparsable: ", Quoted(bus_id), " is not a PCI bus id (expected 00000000:18:00.0)"));
  }
  // nvidia-smi prints an 8-digit domain, sysfs "%04x".
  absl::string_view domain = parts[0];
  while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
  return absl::AsciiStrToLower(
      absl::StrCat(std::string(4 - std::min<size_t>(4, domain.size()), '0'), domain, ":", parts[1],
                   ":", device_function));
}

absl::StatusOr<std::vector<NvidiaSmiGpu>> ParseNvidiaSmiQuery(absl::string_view text) {
  std::vector<NvidiaSmiGpu> gpus;
  bool banner = false;
  NvidiaSmiGpu* current = nullptr;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    if (absl::StripAsciiWhitespace(line) == kBanner) {
      banner = true;
      continue;
    }
    if (!line.empty() && line.front() != ' ') {
      current = nullptr;
      if (!absl::StartsWith(line, kGpuPrefix)) continue;  // Timestamp, Driver Version, ...
      auto address = NvidiaBusIdToPciAddress(line.substr(kGpuPrefix.size()));
      if (!address.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": ", address.status().message()));
      }
      if (gpus.size() == kMaxGpus) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": more than ", kMaxGpus, " GPU blocks"));
      }
      gpus.push_back(NvidiaSmiGpu{*address, "", "", "", ""});
      current = &gpus.back();
      continue;
    }
    // Only the block's own fields (four spaces); nested sections go deeper.
    if (current == nullptr || !absl::StartsWith(line, kFieldIndent) ||
        line.size() <= kFieldIndent.size() || line[kFieldIndent.size()] == ' ') {
      continue;
    }
    auto colon = line.find(':');
    if (colon == absl::string_view::npos) continue;  // a section header ("    PCI")
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    std::string value = ValueOrEmpty(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (key == "Product Name") current->product_name = std::move(value);
    if (key == "Serial Number") current->serial_number = std::move(value);
    if (key == "Board Part Number") current->part_number = std::move(value);
    if (key == "GPU UUID") current->uuid = std::move(value);
  }
  if (!banner && gpus.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("not nvidia-smi -q output: no '", kBanner,
                                                   "' banner and no GPU block (starts ",
                                                   Quoted(FirstLine(text)), ")"));
  }
  return gpus;
}

absl::StatusOr<std::string> NvidiaSmiIdentity::QueryText(std::string* origin) const {
  if (!view_.is_live()) {
    *origin = kCapturePath;
    auto text = view_.ReadText(kCapturePath);
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("the capture has no ", kCapturePath,
                                              " (nvidia-smi was missing on the host)"));
    }
    if (!text.ok()) return absl::Status(text.status().code(), ReasonOf(text.status()));
    return text;
  }
  *origin = "nvidia-smi -q";
  if (runner_ == nullptr) return absl::FailedPreconditionError("no command runner");
  auto result = runner_->Run({"nvidia-smi", "-q"}, kTimeout);
  if (!result.ok()) {
    if (absl::IsNotFound(result.status())) {
      return absl::NotFoundError(absl::StrCat("nvidia-smi not found (", ReasonOf(result.status()),
                                              "): install the NVIDIA driver utilities"));
    }
    return absl::Status(result.status().code(), ReasonOf(result.status()));
  }
  if (result->exit_code != 0) {
    // nvidia-smi prints its failures ("couldn't communicate with the NVIDIA driver") on stdout.
    const std::string said = FirstLine(result->stderr_text).empty()
                                 ? FirstLine(result->stdout_text)
                                 : FirstLine(result->stderr_text);
    std::string message =
        absl::StrCat("exited with status ", result->exit_code, ": ", Quoted(said));
    // NVML's words when /dev/nvidiactl or /dev/nvidiaN would not open for this user.
    if (absl::StrContains(said, "Insufficient Permissions") ||
        absl::StrContains(said, "Permission denied")) {
      return absl::PermissionDeniedError(absl::StrCat(
          message,
          ": the agent's user cannot open /dev/nvidiactl and /dev/nvidia*; the driver makes them "
          "0666 unless NVreg_DeviceFileMode/NVreg_DeviceFileGID narrowed them, so add the "
          "clustercert user to the owning group (ls -l /dev/nvidia*; usermod -aG GROUP "
          "clustercert) and keep DeviceAllow=char-nvidia* in deploy/clustercert-agent.service"));
    }
    return absl::UnavailableError(message);
  }
  return std::move(result->stdout_text);
}

void NvidiaSmiIdentity::Fill(v1::Inventory& inventory) const {
  bool has_gpu = inventory.gpu_runtime().gpus_size() > 0;
  for (const auto& function : inventory.pci()) has_gpu |= function.role() == "gpu";
  if (!has_gpu) return;

  std::string origin;
  auto text = QueryText(&origin);
  absl::StatusOr<std::vector<NvidiaSmiGpu>> gpus =
      text.ok() ? ParseNvidiaSmiQuery(*text) : text.status();
  if (!gpus.ok()) {
    // Messages here are reasons already (the origin is the Unknown's path).
    AddUnknown(inventory, "gpu_identity", origin, gpus.status().message());
    return;
  }
  auto find = [&](absl::string_view address) -> const NvidiaSmiGpu* {
    for (const auto& gpu : *gpus) {
      if (absl::EqualsIgnoreCase(gpu.pci_address, address)) return &gpu;
    }
    return nullptr;
  };
  for (auto& gpu : *inventory.mutable_gpu_runtime()->mutable_gpus()) {
    if (const NvidiaSmiGpu* found = find(gpu.pci_bus_id())) {
      gpu.set_serial(found->serial_number);
      gpu.set_part_number(found->part_number);
    }
  }
  for (auto& function : *inventory.mutable_pci()) {
    if (function.role() != "gpu" || !function.serial_number().empty() ||
        !function.part_number().empty()) {
      continue;
    }
    const NvidiaSmiGpu* found = find(function.address());
    if (found == nullptr) {
      AddUnknown(function, "serial_number", origin,
                 absl::StrCat("nvidia-smi -q lists no GPU at ", function.address(),
                              ": check that the driver sees it (nvidia-smi -L, dmesg)"));
      continue;
    }
    function.set_serial_number(found->serial_number);
    function.set_part_number(found->part_number);
    function.set_product_name(found->product_name);
    function.set_identity_source("nvidia-smi -q");
  }
}

}  // namespace clustercert::agent::inventory
