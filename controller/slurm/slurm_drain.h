#pragma once

#include <functional>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/slurm/slurm_client.h"
#include "controller/slurm/slurm_text.h"

namespace clustercert::controller::slurm {

// Whether the certificate fails one node, and by what.
struct NodeVerdict {
  std::string node;
  bool passed = true;
  std::string first_finding;  // the first blocking finding's message when it failed
};

// Each certified node's verdict: a node fails on its first blocking finding
// of its own (inventory, reachability, uplink), or when pairwise
// localisation names it as the suspect. Pair and collective findings are not
// blamed on one end: the suspect says which node they point at.
std::vector<NodeVerdict> NodeVerdicts(const v1::Certificate& certificate);

enum class DrainActionKind { kDrain, kResume, kLeave };

struct DrainAction {
  std::string node;
  DrainActionKind kind = DrainActionKind::kLeave;
  std::string finding;  // kDrain: the finding the reason quotes
  std::string why;      // one clause for the log line
};

// What to do with each node, NHC's convention: drain a failing node unless
// it is already down or drained by someone else (its reason does not start
// with "clustercert:"); resume a passing node only when clustercert drained
// it; leave every other node alone. Nodes Slurm did not describe are left.
std::vector<DrainAction> PlanDrainActions(const std::vector<NodeVerdict>& verdicts,
                                          const std::vector<SlurmNode>& nodes);

// Carries the actions out, printing one line per node through `print`;
// returns how many Slurm refused (each is printed with Slurm's words).
int ApplyDrainActions(SlurmClient& client, const std::vector<DrainAction>& actions,
                      const std::function<void(const std::string&)>& print);

}  // namespace clustercert::controller::slurm
