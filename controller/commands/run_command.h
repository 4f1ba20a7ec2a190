#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller run PLAN [--out DIR]`: every phase, the per-node tables, and
// the certificate; prints where the certificate is. Exit 0/1/2/3, or 130 /
// 143 after SIGINT / SIGTERM, the partial certificate written
// (InterruptWatcher; a second signal exits at once).
int RunRunCommand(const std::vector<std::string>& args, const CommandOptions& options,
                  const ClientFactory* factory_override = nullptr);

}  // namespace clustercert::controller
