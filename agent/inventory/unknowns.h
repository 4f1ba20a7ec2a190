#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/sysfs_view.h"

namespace clustercert::agent::inventory {

// Records on `message` (any proto with `repeated Unknown unknowns`) that
// `field` could not be read from `path`, and why.
template <typename Message>
void AddUnknown(Message& message, absl::string_view field, absl::string_view path,
                absl::string_view reason) {
  auto* unknown = message.add_unknowns();
  unknown->set_field(std::string(field));
  unknown->set_path(std::string(path));
  unknown->set_reason(std::string(reason));
}

template <typename Message>
void AddUnknown(Message& message, absl::string_view field, absl::string_view path,
                const absl::Status& status) {
  AddUnknown(message, field, path, ReasonOf(status));
}

}  // namespace clustercert::agent::inventory
