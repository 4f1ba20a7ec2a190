#include "controller/plan/plan_parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/regular_file.h"
#include "common/sha256.h"
#include "common/unique_fd.h"
#include "controller/plan/cluster_sections.h"
#include "controller/plan/field_reader.h"
#include "controller/plan/map_reader.h"
#include "controller/plan/other_fabrics_section.h"
#include "controller/plan/plan_error_list.h"
#include "controller/plan/plan_validator.h"
#include "controller/plan/slurm_section.h"
#include "controller/plan/test_sections.h"
#include "controller/plan/yaml_document.h"
#include "controller/plan/yaml_scalar.h"

namespace clustercert::controller::plan {
namespace {

constexpr absl::string_view kTopLevelRule =
    "a map of sections: cluster, fabric, nodes, expect, agents, pairwise, collectives, uplink, "
    "other_fabrics, certificate, slurm";

SourceLocation TopOfFile() { return SourceLocation{1, 1}; }

// Parses the YAML into a document; on a syntax error, or a file beyond the
// limits, reports it at its mark.
std::optional<YamlNode> LoadDocument(absl::string_view yaml_text, FieldReader& reader,
                                     PlanErrorList& errors,
                                     std::unique_ptr<YamlDocument>* document) {
  YamlError error;
  *document = YamlDocument::Parse(yaml_text, reader.context().limits.yaml, &error);
  if (*document == nullptr) {
    errors.Add(reader.Locate(error.mark), "",
               absl::StrCat(error.message,
                            absl::StartsWith(error.message, "the file is not valid YAML")
                                ? " (check the indentation and brackets here or just above)."
                                : "."));
    return std::nullopt;
  }
  const std::vector<YamlNode>& documents = (*document)->documents();
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    errors.Add(TopOfFile(), "",
               absl::StrCat("the plan is empty; it must be ", kTopLevelRule,
                            " (at least cluster and nodes)."));
    return std::nullopt;
  }
  if (documents.size() > 1) {
    errors.Add(reader.Locate(documents[1].Mark()), "",
               absl::StrCat("the file holds ", documents.size(),
                            " YAML documents (separated by ---); a plan is exactly one."));
    return std::nullopt;
  }
  const YamlNode& root = documents[0];
  if (!root.IsMap()) {
    YamlField field{root, "the plan's top level", reader.Locate(root.Mark())};
    reader.Reject(field, kTopLevelRule);
    return std::nullopt;
  }
  return root;
}

void ParseSections(const YamlNode& root, FieldReader& reader, Plan* plan) {
  MapReader top(&reader, YamlField{root, "", reader.Locate(root.Mark())});
  if (std::optional<YamlField> cluster =
          top.Require("cluster",
                      "the cluster's name, of letters, digits, '.', '_' and '-' "
                      "(e.g. kentino-4node)")) {
    if (std::optional<std::string> name = reader.Name(
            *cluster, "a name of letters, digits, '.', '_' and '-' (e.g. kentino-4node)")) {
      plan->cluster = *name;
    }
  }
  ParseFabricSection(top, &plan->fabric);
  // With a slurm section the node list may come from Slurm at run time
  // (--slurm-nodes), so nodes is optional there. KeyLocation does not
  // declare the key, so the allowed keys keep the documented order.
  if (!top.KeyLocation("slurm").has_value() || top.Has("nodes")) {
    ParseNodesSection(top, plan);  // after the fabric: it reads fabric.cabling
  }
  ParseExpectSection(top, &plan->expect);
  ParseAgentsSection(top, &plan->agents);
  ParsePairwiseSection(top, &plan->pairwise);
  ParseCollectivesSection(top, &plan->collectives);
  ParseUplinkSection(top, &plan->uplink);
  ParseOtherFabricsSection(top, plan);  // after the nodes: it checks their data_ip
  ParseCertificateSection(top, &plan->certificate);
  ParseSlurmSection(top, &plan->slurm);
  top.Finish();
}

}  // namespace

absl::StatusOr<Plan> ParsePlan(absl::string_view yaml_text, absl::string_view file_name,
                               const PlanLimits& limits) {
  return ParsePlan(yaml_text, file_name, limits, PlanAttachments{});
}

absl::StatusOr<Plan> ParsePlan(absl::string_view yaml_text, absl::string_view file_name,
                               const PlanLimits& limits, const PlanAttachments& attachments) {
  Plan plan;
  plan.path = std::string(file_name);
  plan.attached_cabling = attachments.cabling_csv;
  PlanErrorList errors{std::string(file_name), limits.max_errors};
  if (yaml_text.size() > limits.max_bytes) {
    errors.Add(TopOfFile(), "",
               absl::StrCat("the file is ", yaml_text.size(), " bytes; a plan may be at most ",
                            limits.max_bytes,
                            " bytes (a plan of 100,000 nodes is about 16 MB): check that it is "
                            "the plan."));
    return errors.ToStatus();
  }
  plan.sha256 = Sha256Hex(yaml_text);
  plan.text = std::string(yaml_text);
  FieldReader reader(ParseContext{&errors, &plan.locations, limits});
  try {
    std::unique_ptr<YamlDocument> document;
    if (std::optional<YamlNode> root = LoadDocument(yaml_text, reader, errors, &document)) {
      ParseSections(*root, reader, &plan);
      ValidatePlan(plan, &errors);
    }
  } catch (const std::exception& error) {
    // Out of memory, or a bug: reported like the file's errors, never thrown
    // through the controller.
    errors.Add(TopOfFile(), "", absl::StrCat("the plan could not be read: ", error.what(), "."));
  }
  if (absl::Status status = errors.ToStatus(); !status.ok()) return status;
  return plan;
}

absl::StatusOr<Plan> LoadPlan(const std::string& path, const PlanLimits& limits) {
  // O_PATH first, then only a regular file is opened and read (the shared
  // ReopenSameFile): a FIFO named as the plan would block the controller in
  // open(2), and a device (/dev/zero) must be neither opened nor read.
  const auto cannot_read = [&path](int err) {
    return absl::ErrnoToStatus(err, absl::StrCat(path, ": cannot read plan"));
  };
  UniqueFd path_fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
  if (!path_fd.valid()) return cannot_read(errno);
  struct stat info;
  if (::fstat(path_fd.get(), &info) != 0) return cannot_read(errno);
  if (!S_ISREG(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot read plan: it is ", FileTypeText(info.st_mode),
                     ", not a regular file; give the path of the plan's YAML file"));
  }
  absl::StatusOr<UniqueFd> fd = ReopenSameFile(
      path_fd.get(), info,
      [&path] { return UniqueFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)); }, path,
      "plan");
  if (!fd.ok()) return fd.status();
  std::string bytes;
  char buffer[64 * 1024];
  // One byte over the limit is enough for ParsePlan to refuse the file.
  while (bytes.size() <= limits.max_bytes) {
    const ssize_t count =
        ::read(fd->get(), buffer, std::min(sizeof(buffer), limits.max_bytes + 1 - bytes.size()));
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) return cannot_read(errno);
    if (count == 0) break;
    bytes.append(buffer, static_cast<size_t>(count));
  }
  return ParsePlan(bytes, path, limits);
}

}  // namespace clustercert::controller::plan
