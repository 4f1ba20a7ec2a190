#include "controller/commands/verify_command.h"

#include <sys/stat.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/text_escape.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/certificate/certificate_signer.h"
#include "controller/certificate/verdict_recompute.h"
#include "controller/commands/diagnostics.h"

namespace clustercert::controller {
namespace {

// Text from the certificate is the author's, and the author may be the
// attacker: control characters could move the cursor and overprint verify's
// own verdict on a terminal, so every such field goes through TerminalText.
std::string Printable(const std::string& text) { return TerminalText(text); }

std::string JsonQuoted(const std::string& text) {
  return absl::StrCat("\"", JsonEscape(text), "\"");
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void PrintSignature(const SignatureCheck& signature) {
  if (signature.valid) {
    std::printf("signature: valid, Ed25519 key %s (trusted: %s)\n", signature.fingerprint.c_str(),
                Printable(signature.trusted_by).c_str());
    return;
  }
  if (signature.intact) {
    std::printf("signature: intact, but the signer is NOT TRUSTED: Ed25519 key %s\n",
                Printable(signature.fingerprint).c_str());
  } else {
    std::printf("signature: INVALID\n");
    for (const auto& problem : signature.problems) {
      std::printf("  - %s\n", Printable(problem).c_str());
    }
  }
  if (!signature.untrusted.empty()) std::printf("  - %s\n", Printable(signature.untrusted).c_str());
}

}  // namespace

absl::StatusOr<TrustedKeys> VerifyTrust(const CommandOptions& options,
                                        const std::string& default_trust_dir) {
  if (!options.pubkey.empty() && !options.trust_dir.empty()) {
    return absl::InvalidArgumentError(
        "give --pubkey FILE (trust exactly that key) or --trust-dir DIR (trust the keys in it), "
        "not both");
  }
  if (!options.pubkey.empty()) return TrustedKeys::FromPublicKeyFile(options.pubkey);
  if (!options.trust_dir.empty()) return TrustedKeys::FromDirectory(options.trust_dir);
  if (IsDirectory(default_trust_dir)) return TrustedKeys::FromDirectory(default_trust_dir);
  return TrustedKeys(default_trust_dir);
}

int RunVerifyCommand(const std::vector<std::string>& args, const CommandOptions& options,
                     const std::string& default_trust_dir) {
  if (args.size() != 1) {
    std::fprintf(stderr,
                 "usage: controller verify CERTIFICATE.json [--pubkey FILE.pub | --trust-dir "
                 "DIR]\n");
    return kExitUsage;
  }
  auto trusted = VerifyTrust(options, default_trust_dir);
  if (!trusted.ok()) {
    DiagnoseError(trusted.status());
    return kExitUsage;
  }
  auto loaded = LoadCertificate(args[0]);
  if (!loaded.ok()) {
    DiagnoseError(loaded.status());
    return kExitUsage;
  }
  const v1::Certificate& certificate = loaded->certificate;
  const SignatureCheck signature = CheckSignature(certificate, *trusted);
  const VerdictRecheck recheck = RecheckVerdicts(certificate);
  const bool valid = signature.valid && recheck.differences.empty();

  if (options.json) {
    std::printf(
        "{\"valid\": %s, \"signed\": %s, \"intact\": %s, \"trusted\": %s, \"fingerprint\": %s, "
        "\"trusted_by\": %s, \"problems\": %zu}\n",
        valid ? "true" : "false", signature.is_signed ? "true" : "false",
        signature.intact ? "true" : "false", signature.trusted ? "true" : "false",
        JsonQuoted(signature.fingerprint).c_str(), JsonQuoted(signature.trusted_by).c_str(),
        signature.problems.size() + recheck.differences.size() +
            (signature.untrusted.empty() ? 0 : 1));
    return valid ? kExitCertified : kExitNotCertified;
  }
  std::printf("certificate: %s (%s, %s, verdict %s)\n", args[0].c_str(),
              Printable(certificate.cluster()).c_str(), Printable(certificate.started_at()).c_str(),
              Printable(certificate.verdict()).c_str());
  PrintSignature(signature);
  std::printf(
      "verdicts: %d check(s), %d pair cell(s), %d sweep(s) recomputed from the recorded "
      "values and the embedded plan: %s\n",
      recheck.checks, recheck.pairs, recheck.sweeps,
      recheck.differences.empty()
          ? "all match"
          : absl::StrCat(recheck.differences.size(), " difference(s)").c_str());
  for (const auto& difference : recheck.differences) {
    std::printf("  - %s\n", Printable(difference).c_str());
  }
  if (certificate.has_baseline()) {
    std::printf("baseline: re-measured %d node(s) (", certificate.baseline().only_nodes_size());
    for (int i = 0; i < certificate.baseline().only_nodes_size(); ++i) {
      std::printf("%s%s", i ? ", " : "", Printable(certificate.baseline().only_nodes(i)).c_str());
    }
    std::printf("), %d result(s) carried over from %s (sha256 %s)\n", recheck.carried,
                Printable(certificate.baseline().started_at()).c_str(),
                Printable(certificate.baseline().sha256().substr(0, 16)).c_str());
  }
  if (certificate.has_resumed()) {
    const v1::Resumed& resumed = certificate.resumed();
    std::printf(
        "resumed: %d pair cell(s), %d sweep(s) and %d uplink run(s) taken over from the journal "
        "%s of the run started %s\n",
        resumed.pairs(), resumed.sweeps(), resumed.uplink_runs(),
        Printable(resumed.journal()).c_str(), Printable(resumed.from_started_at()).c_str());
  }
  if (valid) {
    std::printf("valid\n");
  } else if (!signature.is_signed && recheck.differences.empty()) {
    std::printf(
        "INVALID: an unsigned certificate cannot show that nothing was changed; sign "
        "the next run (certificate.signing_key) and check that one\n");
  } else if (signature.intact && recheck.differences.empty()) {
    std::printf(
        "NOT VERIFIED: the content matches its signature, but anyone can re-sign an "
        "edited certificate with a fresh key, and the signer %s is not a key you trust; "
        "pass the cluster's public key with --pubkey FILE or add it to the trust "
        "directory\n",
        signature.fingerprint.c_str());
  } else {
    std::printf(
        "INVALID: the certificate is not what its run wrote; check the file the run "
        "wrote, or run the plan again\n");
  }
  return valid ? kExitCertified : kExitNotCertified;
}

int RunKeygenCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (!args.empty() || options.out.empty()) {
    std::fprintf(stderr,
                 "usage: controller keygen --out PREFIX   (writes PREFIX and PREFIX.pub)\n");
    return kExitUsage;
  }
  if (auto status = GenerateSigningKey(options.out); !status.ok()) {
    DiagnoseError(status);
    return status.code() == absl::StatusCode::kInvalidArgument ||
                   status.code() == absl::StatusCode::kAlreadyExists
               ? kExitUsage
               : kExitCannotRun;
  }
  auto pem = ReadPublicKeyFile(options.out + ".pub");
  auto fingerprint = pem.ok() ? PublicKeyFingerprint(*pem) : pem.status();
  std::printf(
      "private key: %s (mode 0600: keep it on the controller host only)\n"
      "public key:  %s.pub (give it to whoever checks certificates: controller verify "
      "CERT --pubkey %s.pub, or copy it into %s/)\n"
      "fingerprint: %s\n"
      "sign with it: set certificate.signing_key: %s in the plan\n",
      options.out.c_str(), options.out.c_str(), options.out.c_str(), kDefaultTrustDir,
      fingerprint.ok() ? fingerprint->c_str() : "?", options.out.c_str());
  return 0;
}

}  // namespace clustercert::controller
