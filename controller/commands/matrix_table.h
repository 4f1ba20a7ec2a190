#pragma once

#include <string>
#include <vector>

#include "clustercert/v1/certificate.pb.h"

namespace clustercert::controller {

// Renders the pairwise cells as one client x server matrix per test, rail and
// memory kind (value, '!' after a failing cell, ERR for a test that did not
// run, '.' where no test was scheduled), then the suspects with the inventory
// findings of each suspect node in triage order.
std::string RenderPairMatrices(const std::vector<std::string>& node_names,
                               const std::vector<v1::PairResult>& pairs,
                               const std::vector<v1::Suspect>& suspects, bool color);

}  // namespace clustercert::controller
