#include "controller/pairwise/localisation.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/checks/finding_builder.h"

namespace clustercert::controller::pairwise {
namespace {

constexpr char kCheckOrder[] =
    "MTU, PFC, the cable/transceiver, the NIC's PCIe gen/lanes, NUMA placement";

// One unordered {a, b} pair on one rail (a <= b), judged over all its measurements.
struct Pair {
  std::string a;
  std::string b;
  std::string rail;
  bool failing = false;
  bool explained = false;  // covered by a rail, node or node/rail suspect
  // Bandwidth cells by the direction the data went: [0] a sends to b, [1] b to a.
  int failing_from[2] = {0, 0};
  int passing_from[2] = {0, 0};
  bool other_failing = false;  // a latency (symmetric) cell failed
};

// The node whose NIC sends the data of a bandwidth test: the client, except
// for RDMA reads, where the client pulls the server's memory.
const std::string& DataSender(const PairMeasurement& m) {
  return absl::StartsWith(m.test, "read_") ? m.server : m.client;
}

using Endpoint = std::pair<std::string, std::string>;  // node, rail

struct EndpointStats {
  int failing = 0;
  int total = 0;
  std::set<std::string> peers;
};

// Suspect categories in report order.
enum class Kind { kFabric, kRail, kNode, kNodeRail, kLink };

struct Ranked {
  Kind kind;
  Suspect suspect;
};

std::string OnRail(const std::string& rail) {
  return rail.empty() ? std::string() : absl::StrCat(" on ", rail);
}

std::string OfCount(int failing, int total) { return absl::StrCat(failing, " of ", total); }

std::vector<Pair> JudgedPairs(const std::vector<PairMeasurement>& measurements,
                              const std::vector<v1::Finding>& verdicts) {
  std::map<std::tuple<std::string, std::string, std::string>, Pair> pairs;
  const size_t count = std::min(measurements.size(), verdicts.size());
  for (size_t i = 0; i < count; ++i) {
    const auto status = verdicts[i].status();
    const bool failing = status == checks::kFail;
    if (!failing && status != checks::kPass) continue;
    const PairMeasurement& m = measurements[i];
    const std::string& a = std::min(m.client, m.server);
    const std::string& b = std::max(m.client, m.server);
    Pair& pair = pairs[{a, b, m.rail}];
    pair.a = a;
    pair.b = b;
    pair.rail = m.rail;
    pair.failing = pair.failing || failing;
    if (absl::EndsWith(m.test, "_bw") && a != b) {
      const int from = DataSender(m) == a ? 0 : 1;
      (failing ? pair.failing_from : pair.passing_from)[from] += 1;
    } else if (failing) {
      pair.other_failing = true;
    }
  }
  std::vector<Pair> result;
  result.reserve(pairs.size());
  for (auto& [key, pair] : pairs) result.push_back(std::move(pair));
  return result;
}

// Per (node, rail) counts over the pairs not yet explained by a rail suspect.
std::map<Endpoint, EndpointStats> CountEndpoints(const std::vector<Pair>& pairs) {
  std::map<Endpoint, EndpointStats> endpoints;
  for (const Pair& pair : pairs) {
    if (pair.explained) continue;
    for (const auto& [self, peer] : {std::pair(pair.a, pair.b), std::pair(pair.b, pair.a)}) {
      EndpointStats& stats = endpoints[{self, pair.rail}];
      stats.total += 1;
      stats.failing += pair.failing ? 1 : 0;
      stats.peers.insert(peer);
      if (pair.a == pair.b) break;  // a loopback touches its node once
    }
  }
  return endpoints;
}

bool Touches(const Pair& pair, const Endpoint& endpoint) {
  return pair.rail == endpoint.second && (pair.a == endpoint.first || pair.b == endpoint.first);
}

// "receive" when every failing pair touching `endpoint` fails only in the
// bandwidth cells where the endpoint receives while its sending cells of the
// same pair pass; "send" for the converse; "" otherwise.
std::string FailingSide(const std::vector<Pair>& pairs, const Endpoint& endpoint) {
  bool all_receive = true;
  bool all_send = true;
  bool any = false;
  for (const Pair& pair : pairs) {
    if (!pair.failing || !Touches(pair, endpoint) || pair.a == pair.b) continue;
    any = true;
    const int sends = pair.a == endpoint.first ? 0 : 1;  // index of "endpoint sends"
    const int receives = 1 - sends;
    const bool receive_only = !pair.other_failing && pair.failing_from[receives] > 0 &&
                              pair.failing_from[sends] == 0 && pair.passing_from[sends] > 0;
    const bool send_only = !pair.other_failing && pair.failing_from[sends] > 0 &&
                           pair.failing_from[receives] == 0 && pair.passing_from[receives] > 0;
    all_receive = all_receive && receive_only;
    all_send = all_send && send_only;
  }
  if (!any) return "";
  if (all_receive) return "receive";
  if (all_send) return "send";
  return "";
}

std::string SideSentence(const std::string& where, const std::string& side) {
  if (side == "receive") {
    return absl::StrCat(" (only where ", where, " receives: its sending cells pass, so suspect ",
                        "its receive path: the NIC's receive side, PCIe to its memory, or the ",
                        "switch port's egress towards it)");
  }
  if (side == "send") {
    return absl::StrCat(" (only where ", where, " sends: its receiving cells pass, so suspect ",
                        "its transmit path: the NIC's send side, the cable's transmit lane, or ",
                        "the switch port's ingress from it)");
  }
  return "";
}

int TriageRank(const std::string& id) {
  if (absl::StartsWith(id, "mtu.")) return 0;
  if (absl::StartsWith(id, "qos.")) return 1;
  if (id == "port.rate" || id == "port.phys_state" || id == "port.state") return 2;
  if (absl::StartsWith(id, "pcie.")) return 3;
  if (absl::StartsWith(id, "topology.")) return 4;
  return 5;
}

// A rail on which every pair fails (against three nodes or more) while
// other rails pass: that rail's switch. Its pairs are explained.
void RailSuspects(std::vector<Pair>& pairs, std::vector<Ranked>& ranked) {
  std::map<std::string, std::pair<int, int>> per_rail;  // rail -> failing, total
  std::map<std::string, std::set<std::string>> rail_nodes;
  for (const Pair& pair : pairs) {
    auto& [rail_failing, rail_total] = per_rail[pair.rail];
    rail_failing += pair.failing ? 1 : 0;
    rail_total += 1;
    rail_nodes[pair.rail].insert(pair.a);
    rail_nodes[pair.rail].insert(pair.b);
  }
  if (per_rail.size() < 2) return;
  for (const auto& [rail, counts] : per_rail) {
    const auto [rail_failing, rail_total] = counts;
    if (rail.empty() || rail_failing != rail_total || rail_nodes[rail].size() < 3) continue;
    for (Pair& pair : pairs) pair.explained = pair.explained || pair.rail == rail;
    ranked.push_back(
        {Kind::kRail,
         Suspect{"", rail, rail_failing, rail_total,
                 absl::StrCat("every pair on ", rail, " fails (", OfCount(rail_failing, rail_total),
                              ") while other rails pass: suspect the ", rail,
                              " switch/fabric (MTU, PFC) rather than one node")}});
  }
}

// Endpoints whose every pair fails, against at least two peers ("every"),
// and endpoints where most pairs fail and at least two failures share no
// other suspect ("most"). Their pairs are explained.
std::map<Endpoint, std::string> BadEndpoints(const std::map<Endpoint, EndpointStats>& endpoints,
                                             std::vector<Pair>& pairs) {
  std::map<Endpoint, std::string> bad;  // endpoint -> reason
  for (const auto& [endpoint, stats] : endpoints) {
    if (stats.failing == stats.total && stats.peers.size() >= 2) bad[endpoint] = "every";
  }
  for (const auto& [endpoint, stats] : endpoints) {
    if (bad.count(endpoint) > 0 || stats.failing * 2 <= stats.total) continue;
    int unexplained = 0;
    for (const Pair& pair : pairs) {
      if (pair.explained || !pair.failing || !Touches(pair, endpoint)) continue;
      const std::string& peer = pair.a == endpoint.first ? pair.b : pair.a;
      if (bad.count({peer, pair.rail}) == 0) ++unexplained;
    }
    if (unexplained >= 2) bad[endpoint] = "most";
  }
  for (Pair& pair : pairs) {
    if (pair.explained || !pair.failing) continue;
    pair.explained = bad.count({pair.a, pair.rail}) > 0 || bad.count({pair.b, pair.rail}) > 0;
  }
  return bad;
}

// One bad endpoint (a node, or a node's rail) as a suspect with its reason.
Ranked EndpointSuspect(const Endpoint& endpoint, const EndpointStats& stats,
                       const std::string& how_bad, const std::vector<Pair>& pairs,
                       const std::vector<std::string>& good_rails) {
  const std::string& node = endpoint.first;
  const std::string where = absl::StrCat(node, OnRail(endpoint.second));
  std::string reason = how_bad == "every"
                           ? absl::StrCat("every pair touching ", where, " fails (",
                                          OfCount(stats.failing, stats.total), ")")
                           : absl::StrCat(OfCount(stats.failing, stats.total), " pairs touching ",
                                          where, " fail, more than any other node or rail shares");
  const std::string side = FailingSide(pairs, endpoint);
  absl::StrAppend(&reason, SideSentence(where, side));
  if (!good_rails.empty()) {
    absl::StrAppend(&reason, " while ", node, "'s ", absl::StrJoin(good_rails, ", "),
                    " pairs pass");
  }
  const std::string target =
      endpoint.second.empty() ? node : absl::StrCat(node, " ", endpoint.second);
  absl::StrAppend(&reason, ": check ", target, "'s ", kCheckOrder, ", in that order");
  Suspect suspect{node, endpoint.second, stats.failing, stats.total, reason};
  suspect.side = side;
  return {endpoint.second.empty() ? Kind::kNode : Kind::kNodeRail, std::move(suspect)};
}

// The bad endpoints as suspects, a node's rails folded into one whole-node
// suspect when it has several rails and all of them are bad.
void NodeSuspects(const std::map<Endpoint, EndpointStats>& endpoints,
                  const std::map<Endpoint, std::string>& bad, const std::vector<Pair>& pairs,
                  std::vector<Ranked>& ranked) {
  std::map<std::string, std::vector<Endpoint>> by_node;
  for (const auto& [endpoint, stats] : endpoints) by_node[endpoint.first].push_back(endpoint);
  for (const auto& [node, node_endpoints] : by_node) {
    std::vector<Endpoint> node_bad;
    std::vector<std::string> good_rails;
    int node_failing = 0;
    int node_total = 0;
    for (const Endpoint& endpoint : node_endpoints) {
      const EndpointStats& stats = endpoints.at(endpoint);
      node_failing += stats.failing;
      node_total += stats.total;
      if (bad.count(endpoint) > 0) {
        node_bad.push_back(endpoint);
      } else if (stats.failing == 0) {
        good_rails.push_back(endpoint.second);
      }
    }
    if (node_bad.empty()) continue;
    if (node_bad.size() == node_endpoints.size() && node_endpoints.size() >= 2) {
      std::string side = FailingSide(pairs, node_bad.front());
      for (const Endpoint& endpoint : node_bad) {
        if (FailingSide(pairs, endpoint) != side) side.clear();
      }
      Suspect suspect{
          node, "", node_failing, node_total,
          absl::StrCat("every pair touching ", node, " fails on all its rails (",
                       OfCount(node_failing, node_total), ")", SideSentence(node, side),
                       ": suspect ", node, " itself; check in this order ", kCheckOrder)};
      suspect.side = side;
      ranked.push_back({Kind::kNode, std::move(suspect)});
      continue;
    }
    for (const Endpoint& endpoint : node_bad) {
      ranked.push_back(
          EndpointSuspect(endpoint, endpoints.at(endpoint), bad.at(endpoint), pairs, good_rails));
    }
  }
}

// What is left fails alone: the path between two otherwise healthy nodes
// (or a node's loopback).
void LinkSuspects(const std::vector<Pair>& pairs, size_t node_count, std::vector<Ranked>& ranked) {
  std::map<std::pair<std::string, std::string>, std::vector<const Pair*>> links;
  for (const Pair& pair : pairs) {
    if (pair.failing && !pair.explained) links[{pair.a, pair.b}].push_back(&pair);
  }
  for (const auto& [ends, failing_pairs] : links) {
    const auto& [a, b] = ends;
    int link_total = 0;
    for (const Pair& pair : pairs) link_total += (pair.a == a && pair.b == b) ? 1 : 0;
    const int link_failing = static_cast<int>(failing_pairs.size());
    const std::string rail = link_failing == 1 ? failing_pairs.front()->rail : std::string();
    if (a == b) {
      ranked.push_back(
          {Kind::kNodeRail,
           Suspect{a, rail, link_failing, link_total,
                   absl::StrCat("the loopback test on ", a, OnRail(rail), " fails: check ", a,
                                "'s ", kCheckOrder, ", in that order")}});
      continue;
    }
    std::string reason;
    if (node_count < 3) {
      reason = absl::StrCat(a, "<->", b, " fails", OnRail(rail),
                            " and there is no third node: a bad node cannot be told from a bad "
                            "link; test each against another node");
    } else {
      reason = absl::StrCat(a, "<->", b, " fails", OnRail(rail), " (",
                            OfCount(link_failing, link_total), ") while ", a, " and ", b,
                            " pass with their other peers: suspect the path between them "
                            "(switch ports, inter-switch links, routing/ECMP)");
    }
    ranked.push_back(
        {Kind::kLink, Suspect{absl::StrCat(a, "<->", b), rail, link_failing, link_total, reason}});
  }
}

// Rail before node before node rail before link; more failing pairs first.
std::vector<Suspect> InRankOrder(std::vector<Ranked> ranked) {
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    if (x.suspect.failing_pairs != y.suspect.failing_pairs) {
      return x.suspect.failing_pairs > y.suspect.failing_pairs;
    }
    return std::tie(x.suspect.node, x.suspect.rail) < std::tie(y.suspect.node, y.suspect.rail);
  });
  std::vector<Suspect> suspects;
  suspects.reserve(ranked.size());
  for (Ranked& entry : ranked) suspects.push_back(std::move(entry.suspect));
  return suspects;
}

}  // namespace

std::vector<Suspect> Localise(const std::vector<PairMeasurement>& measurements,
                              const std::vector<v1::Finding>& verdicts) {
  std::vector<Pair> pairs = JudgedPairs(measurements, verdicts);
  int failing = 0;
  std::set<std::string> nodes;
  for (const Pair& pair : pairs) {
    failing += pair.failing ? 1 : 0;
    nodes.insert(pair.a);
    nodes.insert(pair.b);
  }
  if (failing == 0) return {};
  const int total = static_cast<int>(pairs.size());

  // With three or more nodes, all pairs failing shares no node: it is the fabric.
  // With two, a bad node cannot be told from a bad link; the link stage says so.
  if (failing == total && nodes.size() >= 3) {
    return {Suspect{"", "", failing, total,
                    "every pair fails: suspect the switch/fabric (MTU, PFC) rather than one "
                    "node"}};
  }
  std::vector<Ranked> ranked;
  RailSuspects(pairs, ranked);
  const std::map<Endpoint, EndpointStats> endpoints = CountEndpoints(pairs);
  const std::map<Endpoint, std::string> bad = BadEndpoints(endpoints, pairs);
  NodeSuspects(endpoints, bad, pairs, ranked);
  LinkSuspects(pairs, nodes.size(), ranked);
  return InRankOrder(std::move(ranked));
}

std::vector<v1::Finding> TriageFindings(const std::vector<v1::Finding>& node_inventory_findings,
                                        const std::string& node) {
  std::vector<v1::Finding> result;
  for (const v1::Finding& finding : node_inventory_findings) {
    if (finding.node() != node) continue;
    if (finding.status() != checks::kFail && finding.status() != checks::kUnknown) continue;
    result.push_back(finding);
  }
  std::stable_sort(result.begin(), result.end(), [](const v1::Finding& x, const v1::Finding& y) {
    const int rank_x = TriageRank(x.id());
    const int rank_y = TriageRank(y.id());
    if (rank_x != rank_y) return rank_x < rank_y;
    const bool fail_x = x.status() == checks::kFail;
    const bool fail_y = y.status() == checks::kFail;
    return fail_x && !fail_y;
  });
  return result;
}

}  // namespace clustercert::controller::pairwise
