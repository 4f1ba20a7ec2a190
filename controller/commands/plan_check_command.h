#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller plan check PLAN`: validates the plan and says what it covers.
int RunPlanCheckCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
