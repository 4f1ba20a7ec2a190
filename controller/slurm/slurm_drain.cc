#include "controller/slurm/slurm_drain.h"

#include <map>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "controller/checks/node_checks.h"

namespace clustercert::controller::slurm {
namespace {

// Findings that judge a pair or a scope, not the node they are filed under.
bool JudgesManyNodes(const v1::Finding& finding) {
  return absl::StartsWith(finding.id(), "pairwise.") ||
         absl::StartsWith(finding.id(), "collectives.");
}

DrainAction Leave(const SlurmNode& node, std::string why) {
  return DrainAction{node.name, DrainActionKind::kLeave, "", std::move(why)};
}

DrainAction ActionFor(const NodeVerdict& verdict, const SlurmNode& node) {
  if (verdict.passed) {
    if (node.DrainedByClustercert()) {
      return DrainAction{node.name, DrainActionKind::kResume, "",
                         absl::StrCat("passes now; clustercert drained it (", node.reason, ")")};
    }
    return Leave(
        node, node.Drained() || node.Down()
                  ? absl::StrCat("passes; ", node.StateText(), " by someone else (",
                                 node.reason.empty() ? "no reason" : node.reason, "), left alone")
                  : absl::StrCat("passes; ", node.StateText()));
  }
  if (node.DrainedByClustercert()) {
    if (node.reason == ClustercertReason(verdict.first_finding)) {
      return Leave(node, "fails; already drained by clustercert for the same finding");
    }
    return DrainAction{node.name, DrainActionKind::kDrain, verdict.first_finding,
                       "fails; drained by clustercert before, the reason is updated"};
  }
  if (node.Drained() || node.Down()) {
    return Leave(node,
                 absl::StrCat("fails, but it is ", node.StateText(), " by someone else (",
                              node.reason.empty() ? "no reason" : node.reason, "), left alone"));
  }
  return DrainAction{node.name, DrainActionKind::kDrain, verdict.first_finding, "fails"};
}

}  // namespace

std::vector<NodeVerdict> NodeVerdicts(const v1::Certificate& certificate) {
  std::vector<NodeVerdict> verdicts;
  std::unordered_map<std::string, size_t> index;
  for (const v1::NodeResult& node : certificate.nodes()) {
    index.emplace(node.name(), verdicts.size());
    verdicts.push_back(NodeVerdict{node.name(), true, ""});
  }
  auto fail = [&](const std::string& node, const std::string& finding) {
    auto it = index.find(node);
    if (it == index.end() || !verdicts[it->second].passed) return;
    verdicts[it->second].passed = false;
    verdicts[it->second].first_finding = finding;
  };
  for (const v1::Finding& finding : certificate.checks()) {
    if (!JudgesManyNodes(finding) && checks::BlocksCertification(finding)) {
      fail(finding.node(), finding.message());
    }
  }
  for (const v1::Suspect& suspect : certificate.suspects()) {
    fail(suspect.node(),
         absl::StrCat("pairwise localisation names it", suspect.rail().empty() ? "" : " (rail ",
                      suspect.rail(), suspect.rail().empty() ? "" : ")", ": ", suspect.reason()));
  }
  return verdicts;
}

std::vector<DrainAction> PlanDrainActions(const std::vector<NodeVerdict>& verdicts,
                                          const std::vector<SlurmNode>& nodes) {
  std::map<std::string, const SlurmNode*> by_name;
  for (const SlurmNode& node : nodes) by_name[node.name] = &node;
  std::vector<DrainAction> actions;
  for (const NodeVerdict& verdict : verdicts) {
    auto it = by_name.find(verdict.node);
    if (it == by_name.end()) {
      actions.push_back(DrainAction{verdict.node, DrainActionKind::kLeave, "",
                                    "Slurm does not know this node, left alone"});
      continue;
    }
    actions.push_back(ActionFor(verdict, *it->second));
  }
  return actions;
}

int ApplyDrainActions(SlurmClient& client, const std::vector<DrainAction>& actions,
                      const std::function<void(const std::string&)>& print) {
  int failures = 0;
  for (const DrainAction& action : actions) {
    absl::Status done;
    std::string what;
    switch (action.kind) {
      case DrainActionKind::kLeave:
        print(absl::StrCat(action.node, ": no change (", action.why, ")"));
        continue;
      case DrainActionKind::kDrain:
        done = client.Drain(action.node, action.finding);
        what = absl::StrCat("drained (", action.why, "), reason \"",
                            ClustercertReason(action.finding), "\"");
        break;
      case DrainActionKind::kResume:
        done = client.Resume(action.node);
        what = absl::StrCat("resumed (", action.why, ")");
        break;
    }
    if (done.ok()) {
      print(absl::StrCat(action.node, ": ", what));
    } else {
      ++failures;
      print(absl::StrCat(action.node, ": Slurm refused: ", done.message()));
    }
  }
  return failures;
}

}  // namespace clustercert::controller::slurm
