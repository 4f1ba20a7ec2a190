#pragma once

#include <string>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// Stable names for the parts of a certificate, the same in every run and
// release: diff, re-certification and verify match results by them.

// "<id>@<node>/<device>:<port>", empty parts left out:
// "port.rate@node1/mlx5_0:1", "clock.offset", "collectives.busbw@2-node",
// "pairwise.bandwidth@node1/mlx5_0". Pair verdicts get PairKey instead (a
// finding alone does not say who the server was).
std::string FindingKey(const v1::Finding& finding);

// "node1->node2 mlx5_0 write_bw host" ("node1->node2 tcp_bw host" without a
// rail); a retest adds " retest of node3->node4".
std::string PairKey(const v1::PairResult& pair);

// "pairwise.bandwidth@node1/mlx5_0->node2 write_bw host": the finding key of
// a pair's verdict, which names the server and the test too.
std::string PairVerdictKey(const v1::PairResult& pair);

}  // namespace clustercert::controller
