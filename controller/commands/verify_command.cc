#include "controller/commands/verify_command.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/verdict_recompute.h"

namespace clustercert::controller {

int RunVerifyCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (args.size() != 1) {
    std::fprintf(stderr, "usage: controller verify CERTIFICATE.json [--pubkey FILE.pub]\n");
    return kExitUsage;
  }
  auto loaded = LoadCertificate(args[0]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "controller: %s\n", std::string(loaded.status().message()).c_str());
    return kExitUsage;
  }
  std::optional<std::string> trusted;
  if (!options.pubkey.empty()) {
    auto pem = ReadPublicKeyFile(options.pubkey);
    if (!pem.ok()) {
      std::fprintf(stderr, "controller: %s\n", std::string(pem.status().message()).c_str());
      return kExitUsage;
    }
    trusted = *pem;
  }
  const v1::Certificate& certificate = loaded->certificate;
  const SignatureCheck signature = CheckSignature(certificate, trusted);
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  const bool valid = signature.valid && recheck.differences.empty();

  if (options.json) {
    std::printf("{\"valid\": %s, \"signed\": %s, \"fingerprint\": \"%s\", \"problems\": %zu}\n",
                valid ? "true" : "false", signature.is_signed ? "true" : "false",
                signature.fingerprint.c_str(),
                signature.problems.size() + recheck.differences.size());
  } else {
    std::printf("certificate: %s (%s, %s, verdict %s)\n", args[0].c_str(),
                certificate.cluster().c_str(), certificate.started_at().c_str(),
                certificate.verdict().c_str());
    if (signature.valid) {
      std::printf("signature: valid, Ed25519 key %s%s\n", signature.fingerprint.c_str(),
                  signature.checked_against_given_key
                      ? " (the key given with --pubkey)"
                      : " (the key embedded in the certificate: this proves the content is "
                        "unchanged; pass --pubkey with the signer's .pub file to prove who signed)");
    } else {
      std::printf("signature: INVALID\n");
      for (const auto& problem : signature.problems) std::printf("  - %s\n", problem.c_str());
    }
    std::printf("verdicts: %d check(s), %d pair cell(s), %d sweep(s) recomputed from the recorded "
                "values and the embedded plan: %s\n",
                recheck.checks, recheck.pairs, recheck.sweeps,
                recheck.differences.empty()
                    ? "all match"
                    : absl::StrCat(recheck.differences.size(), " difference(s)").c_str());
    for (const auto& difference : recheck.differences) std::printf("  - %s\n", difference.c_str());
    if (certificate.has_baseline()) {
      std::printf("baseline: re-measured %d node(s) (", certificate.baseline().only_nodes_size());
      for (int i = 0; i < certificate.baseline().only_nodes_size(); ++i) {
        std::printf("%s%s", i ? ", " : "", certificate.baseline().only_nodes(i).c_str());
      }
      std::printf("), %d result(s) carried over from %s (sha256 %s)\n", recheck.carried,
                  certificate.baseline().started_at().c_str(),
                  certificate.baseline().sha256().substr(0, 16).c_str());
    }
    if (valid) {
      std::printf("valid\n");
    } else if (!signature.is_signed && recheck.differences.empty()) {
      std::printf("INVALID: an unsigned certificate cannot show that nothing was changed; sign "
                  "the next run (certificate.signing_key) and check that one\n");
    } else {
      std::printf("INVALID: the certificate is not what its run wrote; check the file the run "
                  "wrote, or run the plan again\n");
    }
  }
  return valid ? 0 : 1;
}

int RunKeygenCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (!args.empty() || options.out.empty()) {
    std::fprintf(stderr, "usage: controller keygen --out PREFIX   (writes PREFIX and PREFIX.pub)\n");
    return kExitUsage;
  }
  if (auto status = GenerateSigningKey(options.out); !status.ok()) {
    std::fprintf(stderr, "controller: %s\n", std::string(status.message()).c_str());
    return status.code() == absl::StatusCode::kInvalidArgument ||
                   status.code() == absl::StatusCode::kAlreadyExists
               ? kExitUsage
               : kExitCannotRun;
  }
  auto pem = ReadPublicKeyFile(options.out + ".pub");
  auto fingerprint = pem.ok() ? PublicKeyFingerprint(*pem) : pem.status();
  std::printf("private key: %s (mode 0600: keep it on the controller host only)\n"
              "public key:  %s.pub (give it to whoever checks certificates: controller verify "
              "CERT --pubkey %s.pub)\n"
              "fingerprint: %s\n"
              "sign with it: set certificate.signing_key: %s in the plan\n",
              options.out.c_str(), options.out.c_str(), options.out.c_str(),
              fingerprint.ok() ? fingerprint->c_str() : "?", options.out.c_str());
  return 0;
}

}  // namespace clustercert::controller
