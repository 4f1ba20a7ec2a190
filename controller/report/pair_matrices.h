#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller::report {

// The pairwise cells of a certificate arranged the way every report shows
// them, and what each cell is judged against, worked out once for the HTML
// heatmaps, the Markdown tables and the JUnit cases alike.

enum class PairKind { kBandwidth, kLatency };

// Latency when the unit is microseconds or the test is a *_lat test.
PairKind KindOf(const v1::PairResult& pair);

// The cell's verdict status (pass | fail | unknown | skipped); "fail" for a
// test that did not run to the end and left no verdict.
v1::Finding::Status CellStatus(const v1::PairResult& pair);

// What one cell's value is compared with. Schema 2 records line_rate_gbps
// and threshold on the pair; older certificates only say it in the verdict's
// text ("0.0466 Gb/s (1.8 % of 2.5 Gb/s)", "typical <= 20000 us"), and
// failing pairs sometimes not even there, so the scale falls back in turn to
// the verdict text, the threshold with the plan's fraction, and the two
// ports' rates in the inventory.
struct CellScale {
  // Bandwidth: value / line rate. Latency: typical / bound. Unset when
  // nothing says what to compare with, or the test did not complete.
  std::optional<double> ratio;
  double reference = 0;       // line rate in Gb/s, or the latency bound in us; 0 unknown
  double floor_fraction = 0;  // bandwidth: the plan's minimum fraction of line rate; 0 unknown
  std::string basis;          // where `reference` came from, for the hover text
};

CellScale ScaleOf(const v1::PairResult& pair, const v1::Certificate& certificate);

// One client x server matrix: one test on one rail with one memory kind.
struct PairMatrix {
  std::string test;
  std::string rail;
  std::string memory;
  std::string unit;
  PairKind kind = PairKind::kBandwidth;
  std::vector<std::string> nodes;  // row and column order
  std::map<std::pair<std::string, std::string>, const v1::PairResult*> cells;  // (client, server)
  int duplicates = 0;  // cells measured more than once (the last one is shown)

  // "write_bw rxe0 host", "tcp_bw host".
  std::string Title() const;
};

// The certificate's nodes in their order, then any pair endpoint the node
// list does not name.
std::vector<std::string> NodeOrder(const v1::Certificate& certificate);

// One matrix per (test, rail, memory) in sorted order, retests left out
// (they re-check a failing pair against passing partners and are listed
// apart); the pointers point into `certificate`.
std::vector<PairMatrix> GroupPairMatrices(const v1::Certificate& certificate);

// The same for pairs that are not in a certificate yet (the terminal's
// summary at the end of a run): rows and columns are `node_names`, then any
// pair endpoint they do not name; the pointers point into `pairs`.
std::vector<PairMatrix> GroupPairMatrices(const std::vector<std::string>& node_names,
                                          const std::vector<v1::PairResult>& pairs);

// The retest cells, in certificate order.
std::vector<const v1::PairResult*> Retests(const v1::Certificate& certificate);

}  // namespace clustercert::controller::report
