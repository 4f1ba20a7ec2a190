#include "controller/checks/cabling_checks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/checks/finding_builder.h"
#include "controller/plan/cable_plan.h"

namespace clustercert::controller::checks {
namespace {

constexpr Severity kError = v1::Finding::error;
constexpr Severity kWarning = v1::Finding::warning;

// One port the checks judge: a plan rail's first reported port, or on
// ethernet the data netdev the agent reported.
struct Landing {
  const plan::Node* node = nullptr;
  std::string rail;       // the plan's rail; the data netdev on ethernet ("" when unreported)
  size_t rail_index = 0;  // its place in the node's rails: rail i of the rail-optimised invariant
  const v1::RailPort* seen = nullptr;  // null: the agent reported no port for it
  bool has_rail_ports = false;         // the agent answered the cabling query at all
};

bool Known(const Landing& landing) {
  return landing.seen != nullptr && landing.seen->has_neighbor() &&
         !landing.seen->neighbor().switch_name().empty() &&
         !landing.seen->neighbor().port().empty();
}

std::string SeenText(const Landing& landing) {
  return absl::StrCat(landing.seen->neighbor().switch_name(), "/", landing.seen->neighbor().port());
}

std::string Who(const Landing& landing) {
  return landing.rail.empty() ? absl::StrCat(landing.node->name, "'s data port")
                              : absl::StrCat(landing.node->name, " ", landing.rail);
}

// "leaf1" for "Leaf1.pod2.example.com": how an announced name is looked up.
std::string FirstLabel(absl::string_view name) {
  return absl::AsciiStrToLower(name.substr(0, name.find('.')));
}

std::string SwitchPortKey(absl::string_view switch_name, absl::string_view port) {
  return absl::StrCat(absl::AsciiStrToLower(switch_name), "\n", absl::AsciiStrToLower(port));
}

bool SameEnd(const plan::CableEnd& planned, const v1::LinkNeighbor& seen) {
  return SwitchNameMatches(planned.switch_name, seen.switch_name()) &&
         absl::EqualsIgnoreCase(planned.port, seen.port());
}

FindingBuilder BuilderFor(absl::string_view id, Severity severity, const Landing& landing) {
  return FindingBuilder(id, severity, landing.node->name, landing.rail,
                        landing.seen != nullptr ? landing.seen->port() : 0);
}

v1::Finding UnknownNeighbor(const FindingBuilder& builder, const Landing& landing,
                            absl::string_view expected) {
  MissingFact fact;
  if (landing.seen != nullptr) {
    fact = ExplainMissing(*landing.seen, {"neighbor", "neighbour", "lldp"});
  } else if (landing.has_rail_ports) {
    fact = MissingBecause("the node-agent reported no port for this rail");
  } else {
    fact = MissingBecause(
        "the node-agent reported no rail ports (an agent older than this controller, or one "
        "that was not asked)");
  }
  return builder.Unknown(
      fact, "switch port (LLDP neighbour)", expected,
      "Make the far end readable and re-run: on Ethernet run lldpd on the node (or let the agent "
      "listen: it needs CAP_NET_RAW) and enable LLDP on the switch port (`lldp` on, tx-interval "
      "at most fabric.lldp_wait_s); on InfiniBand install infiniband-diags. An unknown never "
      "counts as a pass.");
}

// The ports of one node the checks judge.
std::vector<Landing> LandingsOf(const plan::Plan& plan, const NodeEvidence& evidence) {
  const v1::Inventory& inventory = *evidence.inventory;
  std::vector<Landing> landings;
  const bool has_rail_ports = inventory.rail_ports_size() > 0;
  if (plan.fabric.type == plan::FabricType::kEthernet) {
    for (const v1::RailPort& port : inventory.rail_ports()) {
      landings.push_back({evidence.node, port.rail(), 0, &port, true});
    }
    if (landings.empty()) landings.push_back({evidence.node, "", 0, nullptr, false});
    return landings;
  }
  const auto& rails = evidence.node->rails;
  for (size_t i = 0; i < rails.size(); ++i) {
    Landing landing{evidence.node, rails[i], i, nullptr, has_rail_ports};
    for (const v1::RailPort& port : inventory.rail_ports()) {
      if (port.rail() != rails[i]) continue;
      if (landing.seen == nullptr || port.port() < landing.seen->port()) landing.seen = &port;
    }
    landings.push_back(landing);
  }
  return landings;
}

std::vector<Landing> AllLandings(const plan::Plan& plan, const std::vector<NodeEvidence>& nodes) {
  std::vector<Landing> all;
  for (const NodeEvidence& evidence : nodes) {
    if (!evidence.reachable || evidence.inventory == nullptr || evidence.node == nullptr) continue;
    for (Landing& landing : LandingsOf(plan, evidence)) all.push_back(std::move(landing));
  }
  return all;
}

// ---- cabling.neighbor ----

// The cable plan's entry for a landing, when it has one.
const plan::CableEnd* PlannedEnd(const plan::Plan& plan, const Landing& landing) {
  auto it = plan.cables.find({landing.node->name, landing.rail});
  if (it == plan.cables.end() && plan.fabric.type == plan::FabricType::kEthernet) {
    it = plan.cables.find({landing.node->name, ""});
  }
  return it == plan.cables.end() ? nullptr : &it->second;
}

// On ethernet: the entry the cable plan gives the node under another netdev
// name than the one holding its data_ip.
const std::pair<const std::pair<std::string, std::string>, plan::CableEnd>* OtherDataPort(
    const plan::Plan& plan, const Landing& landing) {
  if (plan.fabric.type != plan::FabricType::kEthernet) return nullptr;
  auto it = plan.cables.lower_bound({landing.node->name, ""});
  if (it == plan.cables.end() || it->first.first != landing.node->name) return nullptr;
  return &*it;
}

std::string PlannedText(const plan::CableEnd& end) {
  return absl::StrCat(end.switch_name, "/", end.port);
}

struct Judged {
  const Landing* landing;
  const plan::CableEnd* planned;
};

// Indexes the planned ends, so the port a cable was found in names the rail
// the plan puts there (linear: one lookup per miswired port).
class PlannedPlaces {
 public:
  explicit PlannedPlaces(const std::vector<Judged>& judged) {
    for (size_t i = 0; i < judged.size(); ++i) {
      by_end_.emplace(SwitchPortKey(judged[i].planned->switch_name, judged[i].planned->port), i);
    }
  }
  // The judged port the plan puts where `seen` is, if any.
  std::optional<size_t> At(const v1::LinkNeighbor& seen) const {
    auto it = by_end_.find(SwitchPortKey(seen.switch_name(), seen.port()));
    if (it == by_end_.end())
      it = by_end_.find(SwitchPortKey(FirstLabel(seen.switch_name()), seen.port()));
    if (it == by_end_.end()) return std::nullopt;
    return it->second;
  }

 private:
  absl::flat_hash_map<std::string, size_t> by_end_;
};

v1::Finding NeighborPass(const Judged& judged) {
  const Landing& landing = *judged.landing;
  return BuilderFor("cabling.neighbor", kError, landing)
      .Pass(SeenText(landing),
            absl::StrCat(PlannedText(*judged.planned), " (", judged.planned->source, ")"),
            absl::StrCat(landing.rail.empty() ? "the data port" : landing.rail, " on ",
                         landing.node->name, " is on ", SeenText(landing),
                         ", where the cable plan puts it."));
}

v1::Finding Miswired(const Judged& judged, const Judged* owner) {
  const Landing& landing = *judged.landing;
  const std::string seen = SeenText(landing);
  const std::string planned = PlannedText(*judged.planned);
  const std::string subject = landing.rail.empty() ? "the data port" : landing.rail;
  return BuilderFor("cabling.neighbor", kError, landing)
      .Fail(seen, absl::StrCat(planned, " (", judged.planned->source, ")"),
            absl::StrCat(subject, " on ", landing.node->name, " is on ", seen, "; the plan says ",
                         planned, " (", judged.planned->source, ")",
                         owner == nullptr
                             ? ""
                             : absl::StrCat(", and puts ", Who(*owner->landing), " where it is"),
                         ": move the cable, or fix the cable plan if it is wrong."),
            absl::StrCat("Move the cable of ", Who(landing), " from ", seen, " to ", planned,
                         " (the switch's LLDP names that port), or correct the cable plan's "
                         "entry at ",
                         judged.planned->source, " if the plan is what is wrong; then re-run."));
}

v1::Finding Crossed(const Judged& a, const Judged& b) {
  const std::string a_seen = SeenText(*a.landing);
  const std::string b_seen = SeenText(*b.landing);
  return BuilderFor("cabling.neighbor", kError, *a.landing)
      .Fail(absl::StrCat(Who(*a.landing), " on ", a_seen, ", ", Who(*b.landing), " on ", b_seen),
            absl::StrCat(Who(*a.landing), " on ", PlannedText(*a.planned), ", ", Who(*b.landing),
                         " on ", PlannedText(*b.planned)),
            absl::StrCat("the cables of ", Who(*a.landing), " and ", Who(*b.landing),
                         " are crossed: ", Who(*a.landing), "'s is in ", a_seen, " and ",
                         Who(*b.landing), "'s in ", b_seen, "; swap them."),
            absl::StrCat("Swap the two cables at ", a_seen, " and ", b_seen, " (the cable plan, ",
                         a.planned->source, " and ", b.planned->source,
                         ", puts each where the other is; fix it instead if it is wrong), then "
                         "re-run."));
}

// The fail or pass of each judged port with a known neighbour; crossed
// pairs become one finding, on the first of the two.
void JudgeKnown(const std::vector<Judged>& judged, std::vector<v1::Finding>& findings) {
  const PlannedPlaces places(judged);
  std::vector<bool> done(judged.size(), false);
  for (size_t i = 0; i < judged.size(); ++i) {
    if (done[i]) continue;
    done[i] = true;
    const v1::LinkNeighbor& seen = judged[i].landing->seen->neighbor();
    if (SameEnd(*judged[i].planned, seen)) {
      findings.push_back(NeighborPass(judged[i]));
      continue;
    }
    std::optional<size_t> owner = places.At(seen);
    if (owner.has_value() && !done[*owner] &&
        SameEnd(*judged[i].planned, judged[*owner].landing->seen->neighbor())) {
      findings.push_back(Crossed(judged[i], judged[*owner]));
      done[*owner] = true;
      continue;
    }
    findings.push_back(
        Miswired(judged[i], owner.has_value() && *owner != i ? &judged[*owner] : nullptr));
  }
}

v1::Finding WrongDataNetdev(const Landing& landing, const std::string& planned_device,
                            const plan::CableEnd& planned) {
  return BuilderFor("cabling.neighbor", kError, landing)
      .Fail(absl::StrCat("data port ", landing.rail),
            absl::StrCat(planned_device, " on ", PlannedText(planned), " (", planned.source, ")"),
            absl::StrCat("the cable plan names ", planned_device, " as ", landing.node->name,
                         "'s data port (", planned.source, ") but its data_ip is on ", landing.rail,
                         ": fix the device in the cable plan."),
            absl::StrCat("Give ", landing.node->name, "'s row the device ", landing.rail,
                         " (the netdev that holds its data_ip) at ", planned.source,
                         ", then re-run."));
}

void AppendNeighborChecks(const plan::Plan& plan, const std::vector<Landing>& landings,
                          std::vector<v1::Finding>& findings) {
  std::vector<Judged> known;
  for (const Landing& landing : landings) {
    const plan::CableEnd* planned = PlannedEnd(plan, landing);
    if (const auto* other = planned == nullptr ? OtherDataPort(plan, landing) : nullptr) {
      if (!landing.rail.empty()) {
        findings.push_back(WrongDataNetdev(landing, other->first.second, other->second));
        continue;
      }
      // The agent named no data port: unknown below, under the cable plan's
      // name for it.
      Landing named = landing;
      named.rail = other->first.second;
      findings.push_back(UnknownNeighbor(BuilderFor("cabling.neighbor", kError, named), named,
                                         PlannedText(other->second)));
      continue;
    }
    if (planned == nullptr) {
      findings.push_back(BuilderFor("cabling.neighbor", kError, landing)
                             .Skipped("the cable plan gives no far end for this port"));
      continue;
    }
    if (!Known(landing)) {
      findings.push_back(UnknownNeighbor(BuilderFor("cabling.neighbor", kError, landing), landing,
                                         PlannedText(*planned)));
      continue;
    }
    known.push_back({&landing, planned});
  }
  JudgeKnown(known, findings);
}

// ---- cabling.rail_alignment ----

// What one port's landing is judged against.
struct AlignmentFacts {
  absl::flat_hash_map<std::string, std::vector<size_t>> by_switch_port;
  // (leaf group, rail index) -> the switch most of it lands on, "" when none
  // has a strict majority, and the split for messages.
  std::map<std::pair<std::string, size_t>, std::pair<std::string, std::string>> group_switch;
  bool leaves_name_switches = false;
};

std::string GroupName(const Landing& landing) {
  return landing.node->leaf.empty() ? "the cluster"
                                    : absl::StrCat("leaf group ", landing.node->leaf);
}

// Per (group, rail index): how many ports land on each switch.
void CountGroupSwitches(const std::vector<Landing>& landings, AlignmentFacts& facts) {
  std::map<std::pair<std::string, size_t>, std::map<std::string, int>> counts;
  for (const Landing& landing : landings) {
    if (!Known(landing)) continue;
    ++counts[{landing.node->leaf, landing.rail_index}]
            [absl::AsciiStrToLower(landing.seen->neighbor().switch_name())];
  }
  for (const auto& [group, switches] : counts) {
    int total = 0;
    for (const auto& [name, count] : switches) total += count;
    std::string majority;
    std::vector<std::string> split;
    for (const auto& [name, count] : switches) {
      if (2 * count > total) majority = name;
      split.push_back(absl::StrCat(name, " (", count, ")"));
    }
    facts.group_switch[group] = {majority, absl::StrJoin(split, ", ")};
  }
}

AlignmentFacts GatherAlignment(const plan::Plan& plan, const std::vector<Landing>& landings) {
  AlignmentFacts facts;
  std::vector<std::string> leaves;
  for (size_t i = 0; i < landings.size(); ++i) {
    if (!Known(landings[i])) continue;
    const v1::LinkNeighbor& seen = landings[i].seen->neighbor();
    facts.by_switch_port[SwitchPortKey(seen.switch_name(), seen.port())].push_back(i);
    const std::string& leaf = landings[i].node->leaf;
    if (!leaf.empty() && SwitchNameMatches(leaf, seen.switch_name())) {
      facts.leaves_name_switches = true;
    }
  }
  facts.leaves_name_switches &= plan.fabric.topology != plan::FabricTopology::kRailOptimized;
  CountGroupSwitches(landings, facts);
  return facts;
}

// Why a known landing breaks the invariants, or "" when it keeps them.
std::pair<std::string, std::string> AlignmentFault(const std::vector<Landing>& landings, size_t i,
                                                   const AlignmentFacts& facts) {
  const Landing& landing = landings[i];
  const v1::LinkNeighbor& seen = landing.seen->neighbor();
  const std::string where = SeenText(landing);
  const std::vector<size_t>& sharing =
      facts.by_switch_port.at(SwitchPortKey(seen.switch_name(), seen.port()));
  if (sharing.size() > 1) {
    const size_t other = sharing[0] == i ? sharing[1] : sharing[0];
    return {absl::StrCat(Who(landing), " and ", Who(landings[other]), " both report ", where,
                         " as their switch port"),
            "Two ports cannot share one switch port: check the cabling of both (a port "
            "splitter, or two switches announcing the same name and port, also does this) and "
            "give each switch its own LLDP system name."};
  }
  if (facts.leaves_name_switches && !SwitchNameMatches(landing.node->leaf, seen.switch_name())) {
    return {absl::StrCat(Who(landing), " lands on ", where, ", but nodes[].leaf puts ",
                         landing.node->name, " on ", landing.node->leaf),
            absl::StrCat("Move the cable to a port of ", landing.node->leaf, ", or fix ",
                         landing.node->name, "'s leaf in the plan if it is wrong.")};
  }
  const auto& [majority, split] = facts.group_switch.at({landing.node->leaf, landing.rail_index});
  const std::string switch_name = absl::AsciiStrToLower(seen.switch_name());
  if (majority.empty() || majority != switch_name) {
    const std::string rail = absl::StrCat("rail ", landing.rail_index);
    return {
        majority.empty()
            ? absl::StrCat(Who(landing), " (", rail, ") lands on ", where, ", but ", rail, " of ",
                           GroupName(landing), " is split over switches with no majority: ", split)
            : absl::StrCat(Who(landing), " (", rail, ") lands on ", where, ", but ", rail, " of ",
                           GroupName(landing), " lands on ", majority),
        absl::StrCat("Rail-optimised cabling puts ", rail,
                     " of every node of a leaf group "
                     "on one switch: move the cable to ",
                     majority.empty() ? "the group's rail switch" : majority,
                     ", or fix the node's leaf in the plan if the node belongs to another "
                     "group.")};
  }
  return {};
}

v1::Finding AlignmentFinding(const std::vector<Landing>& landings, size_t i,
                             const AlignmentFacts& facts, Severity severity) {
  const Landing& landing = landings[i];
  FindingBuilder builder = BuilderFor("cabling.rail_alignment", severity, landing);
  const std::string expected = absl::StrCat("rail ", landing.rail_index, " of ", GroupName(landing),
                                            " on one switch, one port per switch port");
  if (!Known(landing)) return UnknownNeighbor(builder, landing, expected);
  const auto [fault, remedy] = AlignmentFault(landings, i, facts);
  if (fault.empty()) {
    return builder.Pass(SeenText(landing), expected,
                        absl::StrCat(Who(landing), " lands on ", SeenText(landing), ", with rail ",
                                     landing.rail_index, " of ", GroupName(landing), "."));
  }
  return builder.Fail(SeenText(landing), expected, absl::StrCat(fault, "."), remedy);
}

void AppendAlignmentChecks(const plan::Plan& plan, const std::vector<Landing>& landings,
                           std::vector<v1::Finding>& findings) {
  const Severity severity =
      plan.fabric.topology == plan::FabricTopology::kRailOptimized ? kError : kWarning;
  const AlignmentFacts facts = GatherAlignment(plan, landings);
  for (size_t i = 0; i < landings.size(); ++i) {
    findings.push_back(AlignmentFinding(landings, i, facts, severity));
  }
}

}  // namespace

bool SwitchNameMatches(absl::string_view planned, absl::string_view announced) {
  if (absl::EqualsIgnoreCase(planned, announced)) return true;
  return planned.find('.') == absl::string_view::npos &&
         announced.find('.') != absl::string_view::npos &&
         absl::EqualsIgnoreCase(planned, announced.substr(0, announced.find('.')));
}

std::vector<v1::Finding> EvaluateCabling(const plan::Plan& plan,
                                         const std::vector<NodeEvidence>& nodes) {
  std::vector<v1::Finding> findings;
  const bool asked = plan::AsksForCabling(plan);
  const bool cable_plan = !plan.cables.empty();
  if (!cable_plan) {
    findings.push_back(FindingBuilder("cabling.neighbor", kError, "")
                           .Skipped("the plan gives no cable plan (fabric.cabling, or switch and "
                                    "port on nodes[].rails[])"));
  }
  if (!asked || cable_plan) {
    const Severity severity =
        plan.fabric.topology == plan::FabricTopology::kRailOptimized ? kError : kWarning;
    findings.push_back(
        FindingBuilder("cabling.rail_alignment", severity, "")
            .Skipped(cable_plan ? "the plan has a cable plan, which cabling.neighbor judges port "
                                  "by port"
                                : "the plan does not ask for cabling (fabric.cabling, switch and "
                                  "port on rails, fabric.topology: rail-optimized or "
                                  "fabric.lldp_wait_s)"));
  }
  if (!asked) return findings;
  const std::vector<Landing> landings = AllLandings(plan, nodes);
  if (cable_plan) {
    AppendNeighborChecks(plan, landings, findings);
  } else {
    AppendAlignmentChecks(plan, landings, findings);
  }
  return findings;
}

}  // namespace clustercert::controller::checks
