#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller schema`: prints the JSON Schema of certificate.json (what
// docs/certificate.schema.json holds) on stdout. Exit 0, or 2 on arguments.
int RunSchemaCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
