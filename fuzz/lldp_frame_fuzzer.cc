// One received Ethernet frame as the agent's LLDP receive reads it: bytes a
// switch, or anything on the rail's cable, chose.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/inventory/lldp_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view frame(reinterpret_cast<const char*>(data), size);
  clustercert::agent::inventory::ParseLldpFrame(frame).ok();
  return 0;
}
