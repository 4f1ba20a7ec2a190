#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller health PLAN --local | --node NAME [--slurm-drain]`: the
// inventory checks of one node through its agent, for Slurm's
// HealthCheckProgram. Prints "NODE: ok" or "NODE: FAIL: <first finding>";
// exit 0 pass, 1 fail, 2 usage or plan error, 3 could not run, 4 Slurm
// refused the drain/resume. --local takes the node name from this host's
// short hostname. The node's agent is its plan entry's, else the plan's slurm
// patterns expanded with what `scontrol show node` says of it.
int RunHealthCommand(const std::vector<std::string>& args, const CommandOptions& options,
                     const ClientFactory* factory_override = nullptr);

}  // namespace clustercert::controller
