#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/certificate/trusted_keys.h"
#include "controller/commands/command_support.h"

namespace clustercert::controller {

// The keys `verify` trusts: the one in --pubkey; else every .pub in
// --trust-dir; else every .pub in `default_trust_dir` when that directory
// exists; else none (a certificate is then at best intact, never valid).
// --pubkey and --trust-dir together are a usage error.
absl::StatusOr<TrustedKeys> VerifyTrust(const CommandOptions& options,
                                        const std::string& default_trust_dir);

// `controller verify CERT [--pubkey FILE | --trust-dir DIR]`: checks that the
// signature matches the content and that the signer's key is trusted, and
// recomputes every verdict from the recorded values and the embedded plan.
// Exit 0 valid; 1 not valid (edited, unsigned, or signed by a key nobody
// trusts: each problem printed with its fix); 2 usage, or an unreadable
// certificate, key or trust directory.
int RunVerifyCommand(const std::vector<std::string>& args, const CommandOptions& options,
                     const std::string& default_trust_dir = kDefaultTrustDir);

// `controller keygen --out PREFIX`: a new Ed25519 key pair (PREFIX mode
// 0600, PREFIX.pub). Exit 0, 2 usage, 3 cannot write.
int RunKeygenCommand(const std::vector<std::string>& args, const CommandOptions& options);

}  // namespace clustercert::controller
