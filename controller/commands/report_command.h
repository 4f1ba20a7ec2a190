#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller report CERTIFICATE.json [--out DIR]`: renders report.html,
// report.md and junit.xml from a certificate, next to it or into --out, and
// prints each path (with --json, one object listing them). Exit 0 written,
// 2 bad arguments or an unreadable certificate, 3 a report could not be
// written.
int RunReportCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
