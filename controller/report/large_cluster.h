#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// What the reports show instead of a listing per node above
// kMaxNodesForPerNodeDetail nodes (pair_summary.h): checks counted per check
// id with every check that did not pass kept in full, and skipped tests
// grouped by what was skipped and why. Shared by report.html, report.md and
// the terminal so that all three count the same way; each sink escapes.

// True when a cluster of `nodes` nodes gets the condensed layout.
bool CondensedForScale(size_t nodes);

// How a check ended, as every report counts it: a failing warning is "warn",
// an unset status counts as unknown.
enum class CheckOutcome { kPass, kWarn, kFail, kUnknown, kSkipped };
CheckOutcome OutcomeOf(const v1::Finding& finding);

// One check id over the whole cluster.
struct CheckTally {
  std::string id;
  size_t nodes = 0;  // distinct nodes it ran on ("" for cluster-wide counts as one)
  int pass = 0, warn = 0, fail = 0, unknown = 0, skipped = 0;
  std::vector<const v1::Finding*> not_passing;  // warn, fail and unknown, in input order
  // Why it was skipped, with the node's own prefix taken off (SharedReason),
  // each distinct reason once with how many checks gave it, first seen first.
  std::vector<std::pair<std::string, int>> skip_reasons;
};

// One tally per check id: ids with a failing or unknown check first, then
// those with a warning, then the rest, each group in first-seen order.
std::vector<CheckTally> TallyChecks(const std::vector<const v1::Finding*>& checks);
std::vector<CheckTally> TallyChecks(const google::protobuf::RepeatedPtrField<v1::Finding>& checks);

// A reason with its subject's prefix taken off, so that the same reason on
// 1,024 nodes reads the same: "node7 rxe0 port 1: plan sets X" -> "plan sets
// X" when `node` is "node7". Unchanged when it does not start with `node`.
std::string SharedReason(const std::string& reason, const std::string& node);

// Skipped tests that share a kind, a check id (or the whole key when it names
// no node) and a reason.
struct SkipGroup {
  std::string kind;
  std::string what;
  std::string reason;                 // SharedReason of the entries' reasons
  std::vector<std::string> subjects;  // "node/device:port" per entry; empty for a bare key
  size_t nodes = 0;                   // distinct nodes among the subjects
};

// Groups in first-seen order.
std::vector<SkipGroup> GroupSkipped(const google::protobuf::RepeatedPtrField<v1::SkippedTest>& in);

// Names in the order given, runs of the same prefix with consecutive numbers
// of the same width joined: "n0001–n0040, n0042, gpu-a, n0044, n0045". At
// most `cap` items (a run or a name) when `cap` > 0, then "… and K more"
// counting names. Raw text: each sink escapes it.
std::string NodeRanges(const std::vector<std::string>& names, size_t cap = 0);

}  // namespace clustercert::controller::report
