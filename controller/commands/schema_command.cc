#include "controller/commands/schema_command.h"

#include <cstdio>

#include "controller/certificate/certificate_schema.h"
#include "controller/commands/diagnostics.h"

namespace clustercert::controller {

int RunSchemaCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (!args.empty()) {
    std::fprintf(stderr,
                 "usage: controller schema > docs/certificate.schema.json (takes no arguments)\n");
    return kExitUsage;
  }
  // The schema is JSON already; --json changes nothing.
  const std::string schema = CertificateJsonSchema();
  if (std::fwrite(schema.data(), 1, schema.size(), stdout) != schema.size() ||
      std::fflush(stdout) != 0) {
    Diagnostics().error("cannot write the schema to stdout");
    return kExitCannotRun;
  }
  return kExitCertified;
}

}  // namespace clustercert::controller
