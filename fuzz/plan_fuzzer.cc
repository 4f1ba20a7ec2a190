// `controller plan check` on arbitrary bytes: the plan parser (libyaml, the
// section readers and the validator) must answer every input with a Plan or
// an InvalidArgument listing errors, never crash, hang or throw.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "controller/plan/plan_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const auto plan = clustercert::controller::plan::ParsePlan(text, "fuzz.yaml");
  // ParsePlan promises InvalidArgument for every bad file; any other code
  // means an error escaped the file:line:col reporting.
  if (!plan.ok() && plan.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
  return 0;
}
