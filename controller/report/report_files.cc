#include "controller/report/report_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "controller/report/html_report.h"
#include "controller/report/junit_report.h"
#include "controller/report/markdown_report.h"
#include "controller/report/pair_csv.h"
#include "controller/report/prometheus_metrics.h"

namespace clustercert::controller::report {
namespace {

absl::Status WriteAtomically(const std::filesystem::path& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path partial = fs::path(path.string() + ".partial");
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create ", partial.string(), ": ", std::strerror(errno),
                       "; pass --out with a directory you can write to"));
    }
    out << text;
    if (!out.flush()) {
      const std::string reason = std::strerror(errno);
      std::error_code ignored;
      fs::remove(partial, ignored);
      return absl::UnavailableError(absl::StrCat("cannot write ", partial.string(), ": ", reason,
                                                 "; check free disk space, or pass --out with "
                                                 "another directory"));
    }
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(partial, ignored);
    return absl::UnavailableError(absl::StrCat(
        "cannot rename ", partial.string(), " to ", path.string(), ": ", ec.message(),
        "; remove or move what is at ", path.string(), ", or pass --out with another directory"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> WriteReports(const v1::Certificate& certificate,
                                                      const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root = dir.empty() ? fs::path(".") : fs::path(dir);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root, ec)) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create the report directory ", root.string(), ": ",
                     ec ? ec.message() : std::string("it exists and is not a directory"),
                     "; pass --out with a writable directory"));
  }
  const std::pair<const char*, std::string> reports[] = {
      {kHtmlReportName, RenderHtmlReport(certificate)},
      {kMarkdownReportName, RenderMarkdownReport(certificate)},
      {kJunitReportName, RenderJunitReport(certificate)},
      {kPairCsvName, RenderPairCsv(certificate)},
      {kPrometheusName, RenderPrometheusMetrics(certificate)},
  };
  std::vector<std::string> paths;
  for (const auto& [name, text] : reports) {
    const fs::path path = root / name;
    if (absl::Status status = WriteAtomically(path, text); !status.ok()) return status;
    paths.push_back(path.string());
  }
  return paths;
}

}  // namespace clustercert::controller::report
