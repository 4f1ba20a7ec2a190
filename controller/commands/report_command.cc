#include "controller/commands/report_command.h"

#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "controller/certificate/certificate_reader.h"
#include "controller/commands/diagnostics.h"
#include "controller/report/report_files.h"

namespace clustercert::controller {
namespace {

constexpr char kUsage[] = "usage: controller report CERTIFICATE.json [--out DIR]";

// A JSON string literal (paths may hold quotes or backslashes).
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int RunReportCommand(const std::vector<std::string>& args, const CommandOptions& options) {
  if (args.size() != 1) {
    std::fprintf(stderr, "%s\n", kUsage);
    return kExitUsage;
  }
  const std::string& path = args[0];
  auto loaded = LoadCertificate(path);
  if (!loaded.ok()) {
    DiagnoseError(loaded.status());
    return kExitUsage;
  }
  std::string dir = options.out;
  if (dir.empty()) {
    dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
  }
  auto written = report::WriteReports(loaded->certificate, dir);
  if (!written.ok()) {
    DiagnoseError(written.status());
    return kExitCannotRun;
  }
  if (options.json) {
    std::string list;
    for (const auto& file : *written)
      absl::StrAppend(&list, list.empty() ? "" : ", ", JsonString(file));
    std::printf("{\"certificate\": %s, \"reports\": [%s]}\n", JsonString(path).c_str(),
                list.c_str());
  } else {
    for (const auto& file : *written) std::printf("%s\n", file.c_str());
  }
  return kExitCertified;
}

}  // namespace clustercert::controller
