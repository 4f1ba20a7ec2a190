#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller diff OLD.json NEW.json [--json] [--noise FRACTION]`: what
// changed between two certificates, for re-certification after a cable,
// NIC or switch swap. Prints the text rendering (or JSON with --json) on
// stdout and warns on stderr when the clusters or plans differ. Exit 0 when
// nothing regressed, 1 when something did, 2 on bad arguments or a
// certificate that cannot be read.
int RunDiffCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
