#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "agent/inventory/port_attribute_source.h"

namespace clustercert::agent::inventory {

// PortAttributeSource backed by libibverbs: opens the named device, asks
// ibv_query_port and closes it again, so no verbs context outlives one call.
// It exists because the active MTU of an InfiniBand port is not in sysfs.
class VerbsPortAttributeSource : public PortAttributeSource {
 public:
  VerbsPortAttributeSource() = default;

  absl::StatusOr<PortAttributes> Query(const std::string& device, uint32_t port) override;
};

}  // namespace clustercert::agent::inventory
