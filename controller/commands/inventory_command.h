#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller inventory PLAN`: connect and inventory phases, the per-node
// tables (or, with --json, every node's inventory and checks); no certificate.
int RunInventoryCommand(const std::vector<std::string>& args, const CommandOptions& options,
                        const ClientFactory* factory_override = nullptr);

}  // namespace clustercert::controller
