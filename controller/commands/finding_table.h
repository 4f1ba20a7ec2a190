#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/phases/node_state.h"

namespace clustercert::controller {

// Renders checks as one table per node (then the cluster-wide checks), and
// after each table the remedy of every check that did not pass. Unless
// `all_rows` (run --verbose; inventory), a table holds only the checks that
// failed, warned or stayed unknown, and the node's title line counts the rest
// ("local1  (127.0.0.1:17071, agent 0.1.0): 12 passed, 19 skipped"); every
// check is in report.md and the certificate either way. Above
// report::kMaxNodesForPerNodeDetail nodes, where those tables took about 6 KB
// a node, it prints one row per check id with its counts, the unreachable
// nodes, and the first 50 checks that did not pass with their remedies
// instead (the rest are in report.md and the certificate). Colour only when
// `color` is set (the caller decides: a TTY and no NO_COLOR).
std::string RenderFindingTables(const std::vector<NodeState>& nodes,
                                const std::vector<v1::Finding>& checks, bool color,
                                bool all_rows = true);

}  // namespace clustercert::controller
