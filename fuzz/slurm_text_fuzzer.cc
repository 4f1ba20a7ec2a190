// What scontrol prints (`--oneliner show node`, `show partition`,
// `show hostnames`), read by the controller's Slurm adapter, and the checks
// that guard scontrol's argv (node lists, names) and the drain reason.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "controller/slurm/slurm_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace slurm = clustercert::controller::slurm;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto nodes = slurm::ParseNodeLines(text, 64); nodes.ok()) {
    for (const slurm::SlurmNode& node : *nodes) {
      static_cast<void>(node.DrainedByClustercert());
      node.StateText();
    }
  }
  static_cast<void>(slurm::ParsePartitionNodeList(text).ok());
  static_cast<void>(slurm::ParseHostnames(text, 64).ok());
  static_cast<void>(slurm::ValidateNodeList(text).ok());
  static_cast<void>(slurm::IsSlurmName(text));
  const std::string reason = slurm::ClustercertReason(text);
  if (reason.size() > slurm::kMaxReasonLength) __builtin_trap();
  for (char c : reason) {
    if (c < 0x20 || c > 0x7e) __builtin_trap();  // one printable line, always
  }
  return 0;
}
