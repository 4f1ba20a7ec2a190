#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller run PLAN [--out DIR]`: every phase, the per-node tables, and
// the certificate; prints where the certificate is. Exit 0/1/2/3.
int RunRunCommand(const std::vector<std::string>& args, const CommandOptions& options,
                  const ClientFactory* factory_override = nullptr);

}  // namespace clustercert::controller
