#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/plan/plan.h"
#include "controller/slurm/slurm_text.h"

namespace clustercert::controller::slurm {

// The plan node for one Slurm node: the plan's `nodes:` entry of that name
// when there is one, else the slurm section's patterns expanded with the
// node's facts and its node_defaults. FailedPrecondition, naming the node
// and the fix, when neither is possible.
absl::StatusOr<plan::Node> PlanNodeFor(const plan::Plan& plan, const SlurmNode& node);

// `text` with its top-level `nodes:` block (if any) replaced by `nodes_yaml`
// at the end. The block runs from the line that starts "nodes:" to the next
// line that starts a top-level key.
std::string ReplaceNodesBlock(absl::string_view text, absl::string_view nodes_yaml);

// "nodes:\n  - {name: ..., agent: ...}\n" for already-validated nodes.
std::string NodesYaml(const std::vector<plan::Node>& nodes);

// The plan to run on Slurm's nodes: its text is the file's with the nodes
// list replaced by Slurm's (`origin` says where it came from, in a comment),
// parsed and checked again as a whole, so the certificate embeds exactly the
// plan that was certified and `verify` recomputes it. The error lists the
// plan's errors, the generated lines' positions counted in that text.
absl::StatusOr<plan::Plan> PlanWithSlurmNodes(const plan::Plan& plan,
                                              const std::vector<SlurmNode>& nodes,
                                              absl::string_view origin);

}  // namespace clustercert::controller::slurm
