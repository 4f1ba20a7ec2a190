#pragma once

#include <set>
#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// pairwise.incast's rounds as every report shows them (Markdown, HTML,
// JUnit): one row per recorded round with its figures as text, and the
// round's findings (incast.bandwidth, incast.fairness and the lossless.*
// over its counters), found among the checks by the round's label in their
// keys (pairwise::IncastLabel).
struct IncastRow {
  const v1::IncastResult* round = nullptr;
  std::string label;                         // "incast->node2/mlx5_0 write_bw"
  std::string senders;                       // "node1, node3, node4"
  std::string per_sender;                    // "node1 30.4, node3 ERR, node4 29.9" (Gb/s)
  std::string aggregate;                     // "91.2", or "ERR" for a round that could not run
  std::string line_rate;                     // "100", or "unknown"
  std::string fairness;                      // "0.93"
  std::vector<const v1::Finding*> findings;  // in the checks' order
  // The round's outcome: the worst of its findings, a failing error before
  // an unknown before a failing warning before skipped before pass; unknown
  // when no finding judges it.
  v1::Finding::Status status = v1::Finding::unknown;
  v1::Finding::Severity severity = v1::Finding::error;
  // "pass", or each finding that did not: "FAIL incast.bandwidth; UNKNOWN incast.fairness".
  std::string verdict;
};

std::vector<IncastRow> IncastRows(const v1::Certificate& certificate);

// The round label a finding key names after its id ("incast.bandwidth@L",
// "lossless.drops@L#2" both name L), or "" for a key without one. A report
// that lists the rounds leaves the findings whose label is a round's
// (IncastLabels) out of its other lists.
std::string RoundLabelOf(const std::string& key);
std::set<std::string> IncastLabels(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
