#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clustercert/v1/certificate.pb.h"
#include "controller/phases/rerun_scope.h"
#include "controller/plan/plan.h"

namespace clustercert::controller {

// What `run PLAN --baseline OLD.json --only node3[,node4]` starts from.
struct BaselineRerun {
  std::unique_ptr<v1::Certificate> certificate;  // stable address: scope points at it
  v1::Baseline baseline;                         // recorded in the new certificate
  RerunScope scope;
};

// Loads and checks the baseline before anything runs: it must verify
// (signature when signed, every verdict recomputed), come from the same plan
// file (same SHA-256: carried verdicts keep their thresholds), and every
// --only name must be a plan node. Errors are sentences that name the file,
// the node or the value and say what to do.
absl::StatusOr<BaselineRerun> PrepareBaselineRerun(const std::string& baseline_path,
                                                   const std::string& only, const plan::Plan& plan,
                                                   absl::Time now);

}  // namespace clustercert::controller
