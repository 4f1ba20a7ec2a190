#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// report.html's listings above kMaxNodesForPerNodeDetail nodes
// (large_cluster.h), each linear in what the certificate holds and small
// where the nodes agree. Small clusters keep their per-node listings
// (html_report.cc, html_inventory.h).

// The folded "All checks" part: one row per check id with how many checks
// passed, warned, failed, stayed unknown or were skipped (and why), then
// every check that did not pass or skip in full.
std::string CheckTallyHtml(const v1::Certificate& c);

// The skipped tests grouped by kind, check and reason, each group with its
// count, its nodes and its first 10 subjects.
std::string SkipGroupsHtml(const v1::Certificate& c);

// The Nodes section's body: one row per node with what is its own
// (reachability, agent, hostname, management address, clock), then one block
// per distinct inventory (SharedInventoryHtml) naming every node that has it,
// the most common first.
std::string GroupedNodesHtml(const v1::Certificate& c);

}  // namespace clustercert::controller::report
