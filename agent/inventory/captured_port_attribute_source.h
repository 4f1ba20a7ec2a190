#pragma once

#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/inventory/port_attribute_source.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// Port attributes read from a captured `ibv_devinfo -v` (the file
// clustercert-capture/ibv_devinfo in a fixture or captured tree): the one
// place a tree can carry what only verbs know, such as the InfiniBand active
// MTU.
class CapturedPortAttributeSource final : public PortAttributeSource {
 public:
  static constexpr char kPath[] = "/clustercert-capture/ibv_devinfo";

  explicit CapturedPortAttributeSource(const SysfsView& view) : view_(view) {}
  absl::StatusOr<PortAttributes> Query(const std::string& device, uint32_t port) override;

 private:
  const SysfsView& view_;
};

// Parses `ibv_devinfo -v` text into attributes keyed by (hca_id, port).
absl::StatusOr<std::map<std::pair<std::string, uint32_t>, PortAttributes>> ParseIbvDevinfo(
    absl::string_view text);

}  // namespace clustercert::agent::inventory
