#pragma once

#include <string>

#include "absl/status/status.h"
#include "common/log_setup.h"

namespace clustercert::controller {

// Where the controller's diagnostics go: "controller: <sentence>" on stderr
// (warnings as "controller: warning: …"), through one logger. Progress lines
// and tables are output, not diagnostics, and keep their own printing; so do
// usage texts.
inline spdlog::logger& Diagnostics() { return CommandLineLogger("controller"); }

// A failed status as the diagnostic: its message is the sentence, fix included.
inline void DiagnoseError(const absl::Status& status) {
  Diagnostics().error("{}", std::string(status.message()));
}

}  // namespace clustercert::controller
