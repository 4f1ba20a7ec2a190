#include "controller/pairwise/incast/incast_schedule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "controller/pairwise/schedule/pair_schedule.h"

namespace clustercert::controller::pairwise::incast {

std::vector<IncastRound> BuildIncastRounds(int nodes, int senders, int max_receivers,
                                           const std::vector<int>& rails_per_node) {
  std::vector<IncastRound> rounds;
  if (nodes < 2 || senders < 1 || max_receivers < 1) return rounds;
  const int k = std::min(senders, nodes - 1);
  const int receivers = std::min(nodes, max_receivers);
  for (int receiver = 0; receiver < receivers; ++receiver) {
    IncastRound round;
    round.receiver = receiver;
    for (int step = 1; step <= k; ++step) round.senders.push_back((receiver + step) % nodes);
    if (rails_per_node.empty()) {
      round.rail = schedule::kDataPlane;
      rounds.push_back(std::move(round));
      continue;
    }
    int shared = rails_per_node[static_cast<size_t>(receiver)];
    for (int sender : round.senders) {
      shared = std::min(shared, rails_per_node[static_cast<size_t>(sender)]);
    }
    for (int rail = 0; rail < shared; ++rail) {
      round.rail = rail;
      rounds.push_back(round);
    }
  }
  return rounds;
}

absl::StatusOr<std::vector<IncastRound>> BuildIncastRounds(const plan::Plan& plan) {
  absl::StatusOr<std::vector<int>> rails = schedule::RailsPerNode(plan);
  if (!rails.ok()) return rails.status();
  return BuildIncastRounds(static_cast<int>(plan.nodes.size()), plan.pairwise.incast.senders,
                           plan.pairwise.incast.max_rounds, *rails);
}

std::string DescribeIncastRound(const plan::Plan& plan, const IncastRound& round) {
  auto name = [&](int node) {
    return node >= 0 && node < static_cast<int>(plan.nodes.size())
               ? plan.nodes[static_cast<size_t>(node)].name
               : absl::StrCat("#", node);
  };
  std::string text;
  for (int sender : round.senders) absl::StrAppend(&text, text.empty() ? "" : ", ", name(sender));
  return absl::StrCat(text, " -> ", name(round.receiver));
}

}  // namespace clustercert::controller::pairwise::incast
