#pragma once

#include <string>
#include <vector>

#include "controller/commands/command_support.h"

namespace clustercert::controller {

// `controller verify CERT [--pubkey FILE]`: checks the signature (against
// FILE, else the key the certificate embeds) and recomputes every verdict
// from the recorded values and the embedded plan. Exit 0 valid, 1 invalid
// (each problem printed), 2 usage or unreadable file.
int RunVerifyCommand(const std::vector<std::string>& args, const CommandOptions& options);

// `controller keygen --out PREFIX`: a new Ed25519 key pair (PREFIX mode
// 0600, PREFIX.pub). Exit 0, 2 usage, 3 cannot write.
int RunKeygenCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
