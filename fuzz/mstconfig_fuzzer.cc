// `mstconfig -d BDF q` / `mlxconfig -d BDF q` output (live, or a captured
// tree's clustercert-capture/mstconfig/BDF.txt), and the PCI address check
// that guards mstconfig's command line.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/nic_firmware_collector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  clustercert::agent::inventory::ParseMstconfigQuery(text).ok();
  clustercert::agent::inventory::IsPciAddressArgument(text);
  return 0;
}
