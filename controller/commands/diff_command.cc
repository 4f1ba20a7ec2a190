#include "controller/commands/diff_command.h"

#include <cmath>
#include <cstdio>

#include "common/text_escape.h"
#include "controller/certificate/certificate_diff.h"
#include "controller/certificate/certificate_diff_render.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/commands/diagnostics.h"

namespace clustercert::controller {
namespace {

constexpr int kExitNoRegression = 0;
constexpr int kExitRegressed = 1;

}  // namespace

int RunDiffCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (args.size() != 2) {
    std::fprintf(stderr,
                 "usage: controller diff OLD.json NEW.json [--json] [--noise FRACTION]\n"
                 "  (got %zu argument(s); pass the certificate before and after the change)\n",
                 args.size());
    return kExitUsage;
  }
  if (!std::isfinite(options.noise) || options.noise < 0 || options.noise >= 1) {
    Diagnostics().error("--noise is {}; give a fraction in [0, 1), e.g. 0.1 for a 10 % band",
                        options.noise);
    return kExitUsage;
  }
  auto old_cert = LoadCertificate(args[0]);
  if (!old_cert.ok()) {
    DiagnoseError(old_cert.status());
    return kExitUsage;
  }
  auto new_cert = LoadCertificate(args[1]);
  if (!new_cert.ok()) {
    DiagnoseError(new_cert.status());
    return kExitUsage;
  }

  DiffOptions diff_options;
  diff_options.noise_fraction = options.noise;
  const CertificateDiff diff =
      DiffCertificates(old_cert->certificate, new_cert->certificate, diff_options);
  for (const std::string& warning : diff.warnings) {
    // Warnings quote both certificates' fields, which any file can set.
    Diagnostics().warn("{}", TerminalText(warning));
  }
  const std::string out = options.json ? RenderDiffJson(diff) : RenderDiffText(diff, options.color);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return diff.regressed() ? kExitRegressed : kExitNoRegression;
}

}  // namespace clustercert::controller
