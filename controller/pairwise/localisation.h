#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/pairwise/pair_measurement.h"

namespace clustercert::controller::pairwise {

// What the failing pairs have in common.
//   node "node3", rail "mlx5_1": every pair touching node3 on that rail fails
//   node "node3", rail "":       node3 fails on every one of its (two or more)
//                                rails; a node tested on one rail keeps its rail
//                                name, a tcp node (rail "") is the node
//   node "", rail "mlx5_1":      every pair on that rail fails, other rails pass
//   node "", rail "":            every pair fails: the switch/fabric
//   node "node1<->node3":        that pair fails alone; rail set when only one
//                                rail's pair between them fails
// failing_pairs / total_pairs count the judged pairs the suspect covers; a pair
// is an unordered {node, node} on one rail, failing when any of its judged
// measurements (both directions, every test and memory) fails.
struct Suspect {
  std::string node;
  std::string rail;  // empty = whole node (or every rail)
  int failing_pairs = 0;
  int total_pairs = 0;
  std::string reason;
  // A node (or node/rail) suspect whose failing pairs fail only where it
  // receives the data ("receive") or only where it sends ("send"), the other
  // direction of the same pairs passing; empty when both fail or when the
  // pairs were measured one way only.
  std::string side;
};

// Names the node, node/rail, rail, link or fabric common to the failing pairs.
// `verdicts` is parallel to `measurements` (JudgePair's findings); a verdict of
// fail counts against the pair, pass for it, unknown/skipped are not counted.
// Extra entries of the longer vector are ignored. No failing pair -> empty.
// Order: fabric, rails, nodes, node/rails, links; then most failing first.
std::vector<Suspect> Localise(const std::vector<PairMeasurement>& measurements,
                              const std::vector<v1::Finding>& verdicts);

// `node`'s failing and unknown inventory findings in the seed's triage order:
// MTU (mtu.*), PFC/QoS (qos.*), cable/rate (port.rate, port.phys_state,
// port.state), PCIe (pcie.*), NUMA/topology (topology.*), then the rest. Within
// a step fails come before unknowns, otherwise the input order is kept. Passes
// and skips are left out: they give the operator nothing to check.
std::vector<v1::Finding> TriageFindings(const std::vector<v1::Finding>& node_inventory_findings,
                                        const std::string& node);

}  // namespace clustercert::controller::pairwise
