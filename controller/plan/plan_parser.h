#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_limits.h"

namespace clustercert::controller::plan {

// Parses a plan (docs/plan.md is the reference for every key). Every mistake
// in the file is collected: the result is either a Plan with no error, or an
// InvalidArgument status whose message holds one "file:line:col: message"
// line per error (1-based, sorted by position), each message a sentence that
// names the key, the value seen and what is allowed. Unknown keys, wrong
// types, impossible values and YAML syntax errors are all errors; nothing is
// silently ignored. Sets Plan::path to `file_name`, Plan::sha256 to the
// lowercase hex SHA-256 of `yaml_text`, and Plan::locations. Never throws.
// Linear in the size of the file; a file beyond `limits` is refused with the
// count, the limit and where it was crossed, and at most limits.max_errors
// errors are listed (then one line counting the rest).
absl::StatusOr<Plan> ParsePlan(absl::string_view yaml_text, absl::string_view file_name,
                               const PlanLimits& limits = PlanLimits());

// The files a plan names, when the caller holds their bytes already: a
// certificate embeds the cable plan it was judged against, so `verify`
// recomputes from those bytes and not from whatever the path holds now.
struct PlanAttachments {
  std::optional<std::string> cabling_csv;  // fabric.cabling's bytes
};
absl::StatusOr<Plan> ParsePlan(absl::string_view yaml_text, absl::string_view file_name,
                               const PlanLimits& limits, const PlanAttachments& attachments);

// Reads the file at `path` and parses it with ParsePlan, naming it `path` in
// errors. A file that cannot be read gives "PATH: cannot read plan: REASON"
// with the matching code (NotFound for a missing file).
// A file over limits.max_bytes is refused without being read in full.
absl::StatusOr<Plan> LoadPlan(const std::string& path, const PlanLimits& limits = PlanLimits());

}  // namespace clustercert::controller::plan
