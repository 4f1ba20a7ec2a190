#include "controller/plan/plan_parser.h"


#include <cerrno>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "controller/plan/cluster_sections.h"
#include "controller/plan/field_reader.h"
#include "controller/plan/map_reader.h"
#include "controller/plan/plan_error_list.h"
#include "controller/plan/plan_validator.h"
#include "common/sha256.h"
#include "controller/plan/test_sections.h"
#include "controller/plan/yaml_scalar.h"
#include "yaml-cpp/yaml.h"

namespace clustercert::plan {
namespace {

constexpr absl::string_view kTopLevelRule =
    "a map of sections: cluster, fabric, nodes, expect, agents, pairwise, collectives, uplink, "
    "certificate";


SourceLocation TopOfFile(absl::string_view file_name) {
  SourceLocation top;
  top.file = std::string(file_name);
  top.line = 1;
  top.column = 1;
  return top;
}

// Parses the YAML into a document; on a syntax error reports it at its mark.
std::optional<YAML::Node> LoadDocument(absl::string_view yaml_text, FieldReader& reader,
                                       PlanErrorList& errors) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(yaml_text));
  } catch (const YAML::Exception& error) {
    errors.Add(reader.Locate(error.mark), "",
               absl::StrCat("the file is not valid YAML: ", error.msg,
                            " (check the indentation and brackets here or just above)."));
    return std::nullopt;
  } catch (const std::exception& error) {
    errors.Add(TopOfFile(errors.file_name()), "",
               absl::StrCat("the file could not be read as YAML: ", error.what(), "."));
    return std::nullopt;
  }
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    errors.Add(TopOfFile(errors.file_name()), "",
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
  const YAML::Node& root = documents[0];
  if (!root.IsMap()) {
    YamlField field{root, "the plan's top level", reader.Locate(root.Mark())};
    reader.Reject(field, kTopLevelRule);
    return std::nullopt;
  }
  return root;
}

void ParseSections(const YAML::Node& root, FieldReader& reader, Plan* plan) {
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
  ParseNodesSection(top, &plan->nodes);
  ParseExpectSection(top, &plan->expect);
  ParseAgentsSection(top, &plan->agents);
  ParsePairwiseSection(top, &plan->pairwise);
  ParseCollectivesSection(top, &plan->collectives);
  ParseUplinkSection(top, &plan->uplink);
  ParseCertificateSection(top, &plan->certificate);
  top.Finish();
}

}  // namespace

absl::StatusOr<Plan> ParsePlan(absl::string_view yaml_text, absl::string_view file_name) {
  Plan plan;
  plan.path = std::string(file_name);
  plan.sha256 = Sha256Hex(yaml_text);
  plan.text = std::string(yaml_text);
  PlanErrorList errors{std::string(file_name)};
  FieldReader reader(ParseContext{&errors, &plan.locations});
  try {
    if (std::optional<YAML::Node> root = LoadDocument(yaml_text, reader, errors)) {
      ParseSections(*root, reader, &plan);
      ValidatePlan(plan, &errors);
    }
  } catch (const std::exception& error) {
    // yaml-cpp may still throw on a malformed node while it is walked; any
    // such failure is the file's fault and is reported like the others.
    errors.Add(TopOfFile(file_name), "",
               absl::StrCat("the plan could not be read: ", error.what(), "."));
  }
  if (absl::Status status = errors.ToStatus(); !status.ok()) return status;
  return plan;
}

absl::StatusOr<Plan> LoadPlan(const std::string& path) {
  const auto close = [](std::FILE* file) { std::fclose(file); };
  std::unique_ptr<std::FILE, decltype(close)> file(std::fopen(path.c_str(), "rb"), close);
  if (file == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read plan"));
  std::string bytes;
  char buffer[64 * 1024];
  while (true) {
    const size_t count = std::fread(buffer, 1, sizeof(buffer), file.get());
    bytes.append(buffer, count);
    if (count < sizeof(buffer)) break;
  }
  if (std::ferror(file.get())) {
    return absl::ErrnoToStatus(errno == 0 ? EIO : errno, absl::StrCat(path, ": cannot read plan"));
  }
  return ParsePlan(bytes, path);
}

}  // namespace clustercert::plan
