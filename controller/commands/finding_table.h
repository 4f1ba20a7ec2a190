#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"
#include "controller/phases/node_state.h"

namespace clustercert::controller {

// Renders checks as one table per node (then the cluster-wide checks), and
// after each table the remedy of every check that did not pass. Colour only
// when `color` is set (the caller decides: a TTY and no NO_COLOR).
std::string RenderFindingTables(const std::vector<NodeState>& nodes,
                                const std::vector<v1::Finding>& checks, bool color);

}  // namespace clustercert::controller
