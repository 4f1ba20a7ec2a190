#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/process/command_runner.h"
#include "controller/slurm/slurm_text.h"

namespace clustercert::controller::slurm {

// The nodes a --slurm-nodes value named, and how it was read.
struct NodeSelection {
  std::string source;  // "partition gpu" or "node list node[1-4]"
  std::vector<SlurmNode> nodes;
};

// Asks Slurm about nodes and drains or resumes them, through `scontrol`
// (found on PATH) run by a CommandRunner: no shell, a deadline on every call,
// an argv built only from validated names and a sanitized reason. The
// controller must run where scontrol reaches slurmctld (SLURM_CONF or
// /etc/slurm/slurm.conf) and, to drain, as a Slurm administrator.
class SlurmClient {
 public:
  SlurmClient(process::CommandRunner& runner, absl::Duration timeout);

  // The nodes `selector` names: the partition of that name when one exists,
  // else a hostlist expression (node[1-4],login1). At most kMaxNodes.
  absl::StatusOr<NodeSelection> ListNodes(absl::string_view selector);
  // Each named node as Slurm sees it now, in the order given.
  absl::StatusOr<std::vector<SlurmNode>> ShowNodes(const std::vector<std::string>& names);
  // State=DRAIN with Reason=ClustercertReason(finding).
  absl::Status Drain(const std::string& node, absl::string_view finding);
  // State=RESUME.
  absl::Status Resume(const std::string& node);

 private:
  // scontrol's stdout, or why it failed (naming the command and its words).
  absl::StatusOr<std::string> Scontrol(const std::vector<std::string>& args);
  // The partition's node list; NotFound when there is no such partition.
  absl::StatusOr<std::string> PartitionNodeList(const std::string& partition);

  process::CommandRunner& runner_;
  absl::Duration timeout_;
};

}  // namespace clustercert::controller::slurm
