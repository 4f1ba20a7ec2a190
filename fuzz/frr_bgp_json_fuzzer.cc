// What FRR's vtysh prints for the BGP state (show bgp vrf default summary
// json, ... regexp ^$ json): JSON from a daemon the agent does not control.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/frr_bgp_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  clustercert::agent::inventory::ParseBgpSummary(text).ok();
  clustercert::agent::inventory::ParseBgpOriginated(text).ok();
  return 0;
}
