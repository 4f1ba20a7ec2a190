// `nvidia-smi -q` output (live, or read from a captured tree's
// clustercert-capture/nvidia-smi-q) and the bus ids it prints.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/nvidia_smi_query.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  clustercert::agent::inventory::ParseNvidiaSmiQuery(text).ok();
  clustercert::agent::inventory::NvidiaBusIdToPciAddress(text).ok();
  return 0;
}
